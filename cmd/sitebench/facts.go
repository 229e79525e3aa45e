package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// facts describe the machine and the software a report was measured with.
type facts struct {
	Date      string
	CPU       string // model name from /proc/cpuinfo
	Cores     int
	Memory    string
	Kernel    string
	Go        string
	Hugo      string
	Proofsite string // git commit of the working tree, "+dirty" when it has changes
	Load      string // load average when the run started
	LoadAfter string // and when it ended
	Work      string // the work folder and its file system
	// CreateCost is how long creating one small file takes in the work
	// folder. Full builds create thousands, so a slow file system (a VM
	// disk) weighs on them, and more on the tool that writes more files.
	CreateCost time.Duration
}

func gatherFacts(ctx context.Context, cfg config) facts {
	f := facts{
		Date:      time.Now().UTC().Format(time.RFC3339),
		CPU:       cpuModel(),
		Cores:     runtime.NumCPU(),
		Memory:    memTotal(),
		Kernel:    firstLine(readFile("/proc/sys/kernel/osrelease")),
		Go:        runtime.Version(),
		Hugo:      firstLine(output(ctx, cfg.hugo, "version")),
		Proofsite: gitCommit(ctx),
		Load:      loadAverage(),
		Work:      cfg.work + " (" + fileSystem(cfg.work) + ")",
	}
	f.CreateCost, _ = fileCreateCost(cfg.work)
	if f.Kernel != "" {
		f.Kernel = runtime.GOOS + " " + f.Kernel
	} else {
		f.Kernel = runtime.GOOS
	}
	return f
}

func cpuModel() string {
	s := bufio.NewScanner(strings.NewReader(readFile("/proc/cpuinfo")))
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown (" + runtime.GOARCH + ")"
}

func memTotal() string {
	s := bufio.NewScanner(strings.NewReader(readFile("/proc/meminfo")))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			if kib, err := strconv.ParseFloat(f[1], 64); err == nil {
				return fmtFloat(kib/(1<<20), 1) + " GiB"
			}
		}
	}
	return "unknown"
}

// loadAverage returns the 1, 5 and 15 minute load averages: a busy machine
// makes every figure noisier.
func loadAverage() string {
	f := strings.Fields(readFile("/proc/loadavg"))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func gitCommit(ctx context.Context) string {
	commit := firstLine(output(ctx, "git", "rev-parse", "--short=12", "HEAD"))
	if commit == "" {
		return "unknown"
	}
	if status := output(ctx, "git", "status", "--porcelain", "--untracked-files=no"); strings.TrimSpace(status) != "" {
		commit += "+dirty"
	}
	return commit
}

func output(ctx context.Context, name string, args ...string) string {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func readFile(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	return string(b)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// fileSystem returns the type and device of the file system dir is on, from
// the longest matching mount point in /proc/self/mounts.
func fileSystem(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "unknown"
	}
	best, fs := "", "unknown"
	s := bufio.NewScanner(strings.NewReader(readFile("/proc/self/mounts")))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 3 {
			continue
		}
		mnt := f[1]
		inside := abs == mnt || strings.HasPrefix(abs, strings.TrimSuffix(mnt, "/")+"/")
		if inside && len(mnt) > len(best) {
			best, fs = mnt, f[2]+" on "+f[0]
		}
	}
	return fs
}

// createSamples is how many files fileCreateCost creates.
const createSamples = 500

// fileCreateCost returns the mean time to create and write one 4 KiB file
// in a fresh folder under dir.
func fileCreateCost(dir string) (time.Duration, error) {
	tmp, err := os.MkdirTemp(dir, "create-cost-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	data := make([]byte, 4<<10)
	start := time.Now()
	for i := range createSamples {
		if err := os.WriteFile(filepath.Join(tmp, strconv.Itoa(i)+".html"), data, 0o644); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / createSamples, nil
}
