package dist

import (
	"strings"
	"testing"
)

func TestPlaceIsReadFromTheFirstLauncherWhoseVariablesAreSet(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want Place
		text string
	}{
		{"no launcher", nil, Single, "single process"},
		{"empty variables count as unset", map[string]string{"RANK": "", "WORLD_SIZE": ""}, Single, "single process"},
		{"glua --nproc", map[string]string{"GLUA_RANK": "2", "GLUA_WORLD_SIZE": "3", "GLUA_LOCAL_RANK": "2", "NCCL_COMM_ID": "127.0.0.1:40123"},
			Place{Rank: 2, Size: 3, LocalRank: 2, From: "glua", MasterAddr: "127.0.0.1", MasterPort: 40123},
			"rank 2 of 3 (local 2), from glua; master 127.0.0.1:40123"},
		{"torchrun", map[string]string{"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"},
			Place{Rank: 1, Size: 4, LocalRank: 1, From: "torchrun", MasterAddr: "10.0.0.1", MasterPort: 29501},
			"rank 1 of 4 (local 1), from torchrun; master 10.0.0.1:29501"},
		{"torchrun's master wins over NCCL_COMM_ID", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "node1", "MASTER_PORT": "29500", "NCCL_COMM_ID": "node9:1"},
			Place{Rank: 0, Size: 2, LocalRank: 0, From: "torchrun", MasterAddr: "node1", MasterPort: 29501},
			"rank 0 of 2 (local 0), from torchrun; master node1:29501"},
		{"slurm", map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1"},
			Place{Rank: 5, Size: 8, LocalRank: 1, From: "slurm"},
			"rank 5 of 8 (local 1), from slurm"},
		{"open mpi", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0"},
			Place{Rank: 0, Size: 2, LocalRank: 0, From: "openmpi"},
			"rank 0 of 2 (local 0), from openmpi"},
		{"an IPv6 master", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0", "NCCL_COMM_ID": "[fe80::1]:5000"},
			Place{Rank: 0, Size: 2, LocalRank: 0, From: "slurm", MasterAddr: "fe80::1", MasterPort: 5000},
			"rank 0 of 2 (local 0), from slurm; master [fe80::1]:5000"},
		{"glua's own before torchrun's", map[string]string{"GLUA_RANK": "1", "GLUA_WORLD_SIZE": "2", "GLUA_LOCAL_RANK": "1", "RANK": "7", "WORLD_SIZE": "8", "LOCAL_RANK": "3"},
			Place{Rank: 1, Size: 2, LocalRank: 1, From: "glua"},
			"rank 1 of 2 (local 1), from glua"},
		{"torchrun's before slurm's", map[string]string{"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "3", "SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_LOCALID": "0"},
			Place{Rank: 3, Size: 4, LocalRank: 3, From: "torchrun"},
			"rank 3 of 4 (local 3), from torchrun"},
		{"slurm's before open mpi's", map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0", "OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_LOCAL_RANK": "0"},
			Place{Rank: 1, Size: 2, LocalRank: 0, From: "slurm"},
			"rank 1 of 2 (local 0), from slurm"},
		{"one rank of one", map[string]string{"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"},
			Place{Rank: 0, Size: 1, LocalRank: 0, From: "torchrun"},
			"rank 0 of 1 (local 0), from torchrun"},
		{"spaces around numbers", map[string]string{"GLUA_RANK": " 1", "GLUA_WORLD_SIZE": "2 ", "GLUA_LOCAL_RANK": "1"},
			Place{Rank: 1, Size: 2, LocalRank: 1, From: "glua"},
			"rank 1 of 2 (local 1), from glua"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromEnv(lookup(tc.env))
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			if got != tc.want {
				t.Errorf("FromEnv = %+v, want %+v", got, tc.want)
			}
			if got.String() != tc.text {
				t.Errorf("String() = %q, want %q", got.String(), tc.text)
			}
		})
	}
}

func TestInconsistentLaunchEnvironmentIsAnErrorNamingTheVariable(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"size without rank", map[string]string{"WORLD_SIZE": "4"},
			"the torchrun launch environment: WORLD_SIZE is set but RANK is not"},
		{"rank without size", map[string]string{"SLURM_PROCID": "1", "SLURM_LOCALID": "1"},
			"the slurm launch environment: SLURM_PROCID is set but SLURM_NTASKS is not"},
		{"local rank alone", map[string]string{"GLUA_LOCAL_RANK": "0"},
			"the glua launch environment: GLUA_LOCAL_RANK is set but GLUA_RANK is not"},
		{"no local rank", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"},
			"the openmpi launch environment: OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE are set but OMPI_COMM_WORLD_LOCAL_RANK is not"},
		{"rank equal to size", map[string]string{"GLUA_RANK": "4", "GLUA_WORLD_SIZE": "4", "GLUA_LOCAL_RANK": "0"},
			"the glua launch environment: GLUA_RANK=4 is not between 0 and GLUA_WORLD_SIZE-1 (3)"},
		{"negative rank", map[string]string{"RANK": "-1", "WORLD_SIZE": "4", "LOCAL_RANK": "0"},
			"the torchrun launch environment: RANK=-1 is not between 0 and WORLD_SIZE-1 (3)"},
		{"local rank past size", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "2"},
			"the torchrun launch environment: LOCAL_RANK=2 is not between 0 and WORLD_SIZE-1 (1)"},
		{"a word for a rank", map[string]string{"GLUA_RANK": "one", "GLUA_WORLD_SIZE": "2", "GLUA_LOCAL_RANK": "0"},
			`the glua launch environment: GLUA_RANK="one" is not a whole number`},
		{"a fraction for a size", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2.5", "SLURM_LOCALID": "0"},
			`the slurm launch environment: SLURM_NTASKS="2.5" is not a whole number`},
		{"a size of zero", map[string]string{"RANK": "0", "WORLD_SIZE": "0", "LOCAL_RANK": "0"},
			"the torchrun launch environment: WORLD_SIZE=0: there must be at least one process"},
		{"a bad master port", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "h", "MASTER_PORT": "http"},
			`the torchrun launch environment: MASTER_PORT: "http" is not a port number (1 to 65535)`},
		{"a port without a master", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_PORT": "29500"},
			"the torchrun launch environment: MASTER_PORT is set but MASTER_ADDR is not"},
		{"a comm id without a port", map[string]string{"GLUA_RANK": "0", "GLUA_WORLD_SIZE": "2", "GLUA_LOCAL_RANK": "0", "NCCL_COMM_ID": "127.0.0.1"},
			`the glua launch environment: NCCL_COMM_ID="127.0.0.1" is not host:port`},
		{"a comm id port out of range", map[string]string{"GLUA_RANK": "0", "GLUA_WORLD_SIZE": "2", "GLUA_LOCAL_RANK": "0", "NCCL_COMM_ID": "127.0.0.1:70000"},
			`the glua launch environment: NCCL_COMM_ID: "70000" is not a port number (1 to 65535)`},
		// An error in the first launcher's variables is not papered over
		// by a later launcher's good ones.
		{"glua's bad before torchrun's good", map[string]string{"GLUA_WORLD_SIZE": "2", "RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"},
			"the glua launch environment: GLUA_WORLD_SIZE is set but GLUA_RANK is not"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := FromEnv(lookup(tc.env))
			if err == nil {
				t.Fatalf("FromEnv = %+v, want the error %q", p, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("FromEnv: %q\nwant      %q", err, tc.want)
			}
			if p != (Place{}) {
				t.Errorf("FromEnv returned %+v with its error", p)
			}
		})
	}
}

func lookup(env map[string]string) func(string) string {
	return func(name string) string { return env[name] }
}

func TestTorchrunRanksMeetBesideItsStoreNotOnIt(t *testing.T) {
	env := map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "h", "MASTER_PORT": "65535"}
	if _, err := FromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "MASTER_PORT=65535") {
		t.Fatalf("MASTER_PORT=65535: got %v, want an error naming it", err)
	}
}
