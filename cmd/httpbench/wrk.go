package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// wrkResult is what one wrk run reports.
type wrkResult struct {
	Requests       int64         // "N requests in ..."
	RequestsPerSec float64       // "Requests/sec:"
	P99            time.Duration // the 99% line of --latency
	Non2xx         int64         // "Non-2xx or 3xx responses:"
	SocketErrors   int64         // connect + read + write + timeout of "Socket errors:"

	// ServerCPU is the CPU time the server under test (its process group)
	// used during the run; measure sets it.
	ServerCPU time.Duration

	// OthersCPU is the share of the machine's CPU that processes other
	// than wrk and the server under test used during the run, or -1 when
	// unknown; measure sets it.
	OthersCPU float64
}

// clean reports whether every response was a success and no socket failed.
func (r wrkResult) clean() bool { return r.Non2xx == 0 && r.SocketErrors == 0 }

// wrkRun is one wrk invocation's parameters.
type wrkRun struct {
	threads, connections int
	duration             time.Duration
	url                  string
	script               string // a Lua script (-s), or ""
}

// args returns wrk's command line after the executable.
func (w wrkRun) args() []string {
	args := []string{
		"-t" + strconv.Itoa(w.threads), "-c" + strconv.Itoa(w.connections),
		"-d" + strconv.Itoa(int(w.duration/time.Second)) + "s", "--latency",
	}
	if w.script != "" {
		args = append(args, "-s", w.script)
	}
	return append(args, w.url)
}

// runWrk runs wrk and parses its report; out is wrk's whole output and
// cpu the CPU time wrk itself used.
func runWrk(ctx context.Context, wrk string, w wrkRun) (res wrkResult, out string, cpu time.Duration, err error) {
	cmd := exec.CommandContext(ctx, wrk, w.args()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // if the harness dies
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return wrkResult{}, buf.String(), 0, fmt.Errorf("wrk %s: %w: %s", w.url, err, strings.TrimSpace(buf.String()))
	}
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	res, err = parseWrk(buf.String())
	if err != nil {
		return wrkResult{}, buf.String(), 0, fmt.Errorf("wrk %s: %w", w.url, err)
	}
	return res, buf.String(), cpu, nil
}

// parseWrk reads the report wrk 4 prints with --latency:
//
//	  Latency Distribution
//	     50%    1.88ms
//	     99%   20.93ms
//	  169363 requests in 5.03s, 372.93MB read
//	  Non-2xx or 3xx responses: 12
//	  Socket errors: connect 0, read 0, write 0, timeout 8
//	Requests/sec:  33664.92
//
// Requests/sec, the request count and the 99% line are required; the error
// lines appear only when there were errors.
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	var haveRate, haveP99, haveCount, inDist bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		fields := strings.Fields(line)
		var err error
		switch {
		case line == "Latency Distribution":
			inDist = true
		case inDist && len(fields) == 2 && fields[0] == "99%":
			r.P99, err = parseWrkDuration(fields[1])
			haveP99 = err == nil
		case len(fields) >= 3 && fields[1] == "requests" && fields[2] == "in":
			inDist = false
			r.Requests, err = strconv.ParseInt(fields[0], 10, 64)
			haveCount = err == nil
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			r.Non2xx, err = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "Non-2xx or 3xx responses:")), 10, 64)
		case strings.HasPrefix(line, "Socket errors:"):
			r.SocketErrors, err = parseSocketErrors(strings.TrimPrefix(line, "Socket errors:"))
		case strings.HasPrefix(line, "Requests/sec:"):
			r.RequestsPerSec, err = strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "Requests/sec:")), 64)
			haveRate = err == nil
		}
		if err != nil {
			return wrkResult{}, fmt.Errorf("reading wrk line %q: %w", line, err)
		}
	}
	switch {
	case !haveRate:
		return wrkResult{}, errors.New("no Requests/sec line in wrk output")
	case !haveP99:
		return wrkResult{}, errors.New("no 99% latency line in wrk output (was --latency given?)")
	case !haveCount:
		return wrkResult{}, errors.New("no request count in wrk output")
	}
	return r, nil
}

// parseSocketErrors sums " connect 0, read 0, write 0, timeout 8".
func parseSocketErrors(s string) (int64, error) {
	var sum int64
	for part := range strings.SplitSeq(s, ",") {
		f := strings.Fields(part)
		if len(f) != 2 {
			return 0, fmt.Errorf("socket error count %q", part)
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// wrkTimeUnits are the suffixes wrk prints latencies with; the two-letter
// ones come first so "ms" is not read as "s".
var wrkTimeUnits = []struct {
	suffix string
	unit   time.Duration
}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}}

// parseWrkDuration reads a latency as wrk prints it: "95.00us", "1.88ms",
// "1.24s", "2.00m".
func parseWrkDuration(s string) (time.Duration, error) {
	for _, u := range wrkTimeUnits {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("latency %q", s)
		}
		return time.Duration(v * float64(u.unit)), nil
	}
	return 0, fmt.Errorf("latency %q has no unit", s)
}
