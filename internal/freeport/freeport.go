// Package freeport finds a TCP port of 127.0.0.1 that is free now, for a
// rendezvous that another process binds later.
//
// The port is closed again before its user binds it, so another program
// could take it in between. A port the kernel hands out for bind(0) and
// connect() is the likeliest to be taken: the ranks of other jobs listen
// on such ports by the dozen, and a port just closed by glua --nproc was
// seen bound again by one of them before rank 0 started. So the port
// comes from outside the kernel's ephemeral range, where only a program
// that names it can take it.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Local is 127.0.0.1:port with a port free now, outside the ephemeral
// range when one there can be bound.
func Local() (string, error) {
	p, err := Consecutive(1)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

// Consecutive is a port P of 127.0.0.1 with P to P+n-1 all free now
// (glua --nnodes meets on P, its ranks on P+1), outside the ephemeral
// range when such ports there can be bound.
func Consecutive(n int) (int, error) {
	eph := ephemeral()
	for _, p := range candidates(eph, 64) {
		last := p + n - 1
		if last > 65535 || (p < eph.lo && last >= eph.lo) {
			continue
		}
		if bindable(p, n) {
			return p, nil
		}
	}
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p+n-1 <= 65535 && bindable(p, n) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no %d free ports in a row on 127.0.0.1", n)
}

// bindable says whether ports p to p+n-1 of 127.0.0.1 can all be bound
// now; it binds them together and closes them again.
func bindable(p, n int) bool {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for q := p; q < p+n; q++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q)))
		if err != nil {
			return false
		}
		held = append(held, l)
	}
	return true
}

// portRange is the kernel's ephemeral ports, first and last.
type portRange struct{ lo, hi int }

// ephemeral reads Linux's ip_local_port_range; elsewhere, or when it
// cannot be read, it is IANA's dynamic range, which BSDs and macOS use.
func ephemeral() portRange {
	iana := portRange{49152, 65535}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return iana
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return iana
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return iana
	}
	return portRange{lo, hi}
}

// candidates is up to n random ports from 1024 to 65535 outside
// eph, each at most once.
func candidates(eph portRange, n int) []int {
	var ranges []portRange
	if eph.lo > 1024 {
		ranges = append(ranges, portRange{1024, eph.lo - 1})
	}
	if eph.hi < 65535 {
		ranges = append(ranges, portRange{max(eph.hi+1, 1024), 65535})
	}
	total := 0
	for _, r := range ranges {
		total += r.hi - r.lo + 1
	}
	if total <= 0 {
		return nil
	}
	var ports []int
	seen := map[int]bool{}
	for len(ports) < min(n, total) {
		k := rand.IntN(total)
		for _, r := range ranges {
			if size := r.hi - r.lo + 1; k >= size {
				k -= size
				continue
			}
			if p := r.lo + k; !seen[p] {
				seen[p] = true
				ports = append(ports, p)
			}
			break
		}
	}
	return ports
}
