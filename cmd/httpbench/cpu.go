package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Other engineers' jobs share this machine. To tell a slow round from a
// crowded one, every wrk run notes how much of the machine's CPU went to
// processes other than wrk and the server under test (from /proc, in clock
// ticks; Linux reports them in USER_HZ, 100 a second).

// clockTick is the unit of the CPU times in /proc (USER_HZ).
const clockTick = 10 * time.Millisecond

// cpuStat is the machine's CPU time so far, from the first line of
// /proc/stat, in clock ticks summed over all CPUs.
type cpuStat struct {
	busy  int64 // user, nice, system, irq, softirq and steal
	total int64 // busy plus idle and iowait
}

// parseCPUStat reads the aggregate "cpu" line of /proc/stat:
//
//	cpu  user nice system idle iowait irq softirq steal guest guest_nice
//
// guest time is already counted in user.
func parseCPUStat(data string) (cpuStat, error) {
	line, _, _ := strings.Cut(data, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuStat{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var s cpuStat
	for i, v := range f[1:9] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return cpuStat{}, fmt.Errorf("/proc/stat: %w", err)
		}
		s.total += n
		if i != 3 && i != 4 { // idle, iowait
			s.busy += n
		}
	}
	return s, nil
}

func readCPUStat() (cpuStat, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuStat{}, err
	}
	return parseCPUStat(string(b))
}

// parseProcStat returns the process group and the user plus system CPU
// time, in clock ticks, from a /proc/PID/stat line. The command name in
// parentheses may hold spaces, so fields are counted after its last ')'.
func parseProcStat(line string) (pgrp int, ticks int64, err error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("proc stat %q", line)
	}
	f := strings.Fields(line[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("proc stat %q: too few fields", line)
	}
	pgrp, err = strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, err
	}
	utime, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, 0, err
	}
	stime, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, 0, err
	}
	return pgrp, utime + stime, nil
}

// groupTicks returns the CPU time used so far by the live processes of
// process group pgid (a server and, for nginx, its workers).
func groupTicks(pgid int) int64 {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var sum int64
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		if g, t, err := parseProcStat(string(b)); err == nil && g == pgid {
			sum += t
		}
	}
	return sum
}

// othersShare returns the fraction of the machine's CPU time between
// before and after that went neither to ours (ticks) nor to idle.
func othersShare(before, after cpuStat, ours int64) float64 {
	total := after.total - before.total
	if total <= 0 {
		return 0
	}
	others := after.busy - before.busy - ours
	return max(0, float64(others)/float64(total))
}
