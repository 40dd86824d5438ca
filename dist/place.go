package dist

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The variables glua's own launcher (glua --nproc) sets for each rank.
// They are read before any other launcher's, so that glua --nproc run
// inside a Slurm or torchrun job still gives each child its own place.
const (
	EnvRank      = "GLUA_RANK"
	EnvWorldSize = "GLUA_WORLD_SIZE"
	EnvLocalRank = "GLUA_LOCAL_RANK"
	// EnvCommID is NCCL's own bootstrap address (host:port). NCCL reads
	// it itself; glua reads it only to say where the ranks meet.
	EnvCommID = "NCCL_COMM_ID"
)

// Place is where this process stands among the processes of one job.
type Place struct {
	Rank      int // 0 ≤ Rank < Size
	Size      int // how many processes, 1 for a single one
	LocalRank int // the rank among this host's processes
	// From names the launcher whose environment gave the place: "glua",
	// "torchrun", "slurm", "openmpi", or "none" for a single process.
	From string
	// MasterAddr and MasterPort are where the ranks meet, when the
	// launcher says (torchrun's MASTER_ADDR and MASTER_PORT+1, or
	// NCCL_COMM_ID); "" and 0 when it does not.
	MasterAddr string
	MasterPort int
}

// Single is the place of a process that no launcher started.
var Single = Place{Rank: 0, Size: 1, LocalRank: 0, From: "none"}

// launcher is one launcher's variables.
type launcher struct {
	name                   string
	rank, size, localRank  string
	masterAddr, masterPort string // "" when it names none
}

// launchers are read in this order; the first whose variables are set
// gives the place.
var launchers = []launcher{
	{name: "glua", rank: EnvRank, size: EnvWorldSize, localRank: EnvLocalRank},
	{name: "torchrun", rank: "RANK", size: "WORLD_SIZE", localRank: "LOCAL_RANK", masterAddr: "MASTER_ADDR", masterPort: "MASTER_PORT"},
	{name: "slurm", rank: "SLURM_PROCID", size: "SLURM_NTASKS", localRank: "SLURM_LOCALID"},
	{name: "openmpi", rank: "OMPI_COMM_WORLD_RANK", size: "OMPI_COMM_WORLD_SIZE", localRank: "OMPI_COMM_WORLD_LOCAL_RANK"},
}

// FromEnv finds this process's place from the variables getenv gives
// (os.Getenv, or a map's lookup in a test). A variable set to "" counts
// as unset, as the configuration's do. Values that cannot describe a
// place (a rank not below the size, a size without a rank, a word where
// a number belongs) are errors naming the variable, never a guess: a
// rank that guessed wrong would wait forever for peers that never come.
func FromEnv(getenv func(string) string) (Place, error) {
	for _, l := range launchers {
		rank, size, local := getenv(l.rank), getenv(l.size), getenv(l.localRank)
		if rank == "" && size == "" && local == "" {
			continue
		}
		p, err := l.place(getenv)
		if err != nil {
			return Place{}, fmt.Errorf("the %s launch environment: %w", l.name, err)
		}
		return p, nil
	}
	return Single, nil
}

func (l launcher) place(getenv func(string) string) (Place, error) {
	for _, pair := range [][2]string{{l.rank, l.size}, {l.size, l.rank}, {l.localRank, l.rank}} {
		if getenv(pair[0]) != "" && getenv(pair[1]) == "" {
			return Place{}, fmt.Errorf("%s is set but %s is not", pair[0], pair[1])
		}
	}
	if getenv(l.localRank) == "" {
		// Guessing the local rank from the rank would put two ranks of
		// a multi-node job on one GPU.
		return Place{}, fmt.Errorf("%s and %s are set but %s is not", l.rank, l.size, l.localRank)
	}
	p := Place{From: l.name}
	var err error
	if p.Size, err = number(getenv, l.size); err != nil {
		return Place{}, err
	}
	if p.Size < 1 {
		return Place{}, fmt.Errorf("%s=%d: there must be at least one process", l.size, p.Size)
	}
	if p.Rank, err = number(getenv, l.rank); err != nil {
		return Place{}, err
	}
	if p.LocalRank, err = number(getenv, l.localRank); err != nil {
		return Place{}, err
	}
	for _, v := range []struct {
		name  string
		value int
	}{{l.rank, p.Rank}, {l.localRank, p.LocalRank}} {
		if v.value < 0 || v.value >= p.Size {
			return Place{}, fmt.Errorf("%s=%d is not between 0 and %s-1 (%d)", v.name, v.value, l.size, p.Size-1)
		}
	}
	if p.MasterAddr, p.MasterPort, err = master(getenv, l); err != nil {
		return Place{}, err
	}
	return p, nil
}

// number reads a whole number that must be there.
func number(getenv func(string) string, name string) (int, error) {
	text := getenv(name)
	n, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not a whole number", name, text)
	}
	return n, nil
}

// master is where the ranks meet: the launcher's own variables when it
// has them, else NCCL_COMM_ID, which glua --nproc sets and a multi-node
// user may set by hand. A launcher's MASTER_PORT is its own store's port
// (torchrun's TCPStore listens there on rank 0's node), so the ranks meet
// on the port after it; NCCL_COMM_ID is used as given.
func master(getenv func(string) string, l launcher) (string, int, error) {
	if l.masterAddr != "" && (getenv(l.masterAddr) != "" || getenv(l.masterPort) != "") {
		addr := getenv(l.masterAddr)
		if addr == "" {
			return "", 0, fmt.Errorf("%s is set but %s is not", l.masterPort, l.masterAddr)
		}
		if getenv(l.masterPort) == "" {
			return addr, 0, nil
		}
		port, err := portNumber(l.masterPort, getenv(l.masterPort))
		if err != nil {
			return "", 0, err
		}
		if port == 65535 {
			return "", 0, fmt.Errorf("%s=65535 leaves no port after it for the ranks to meet on", l.masterPort)
		}
		return addr, port + 1, nil
	}
	id := getenv(EnvCommID)
	if id == "" {
		return "", 0, nil
	}
	host, portText, err := net.SplitHostPort(id)
	if err != nil || host == "" {
		return "", 0, fmt.Errorf("%s=%q is not host:port", EnvCommID, id)
	}
	port, err := portNumber(EnvCommID, portText)
	return host, port, err
}

func portNumber(name, text string) (int, error) {
	port, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("%s: %q is not a port number (1 to 65535)", name, text)
	}
	return port, nil
}

// String is what glua --info shows: "rank 1 of 4 (local 1), from
// torchrun; master 10.0.0.1:29500", or "single process".
func (p Place) String() string {
	if p.From == "none" || p.From == "" {
		return "single process"
	}
	s := fmt.Sprintf("rank %d of %d (local %d), from %s", p.Rank, p.Size, p.LocalRank, p.From)
	switch {
	case p.MasterAddr != "" && p.MasterPort != 0:
		s += "; master " + net.JoinHostPort(p.MasterAddr, strconv.Itoa(p.MasterPort))
	case p.MasterAddr != "":
		s += "; master " + p.MasterAddr
	}
	return s
}
