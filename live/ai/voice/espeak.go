package voice

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// maxMP3Bytes bounds what lame may write: far more than MaxTextRunes
// characters take at the slowest mode.
const maxMP3Bytes = 8 << 20

// espeakArgs are espeak-ng's arguments per mode: UTF-8 input (-b 1), no
// SSML or markup (no -m), the text read from standard input (--stdin) and
// WAV written to standard output (--stdout). Words per minute set the
// pace.
var espeakArgs = map[Mode][]string{
	ModeStandard: {"-b", "1", "-v", "en-us", "-s", "165", "--stdin", "--stdout"},
	ModeSlow:     {"-b", "1", "-v", "en-us", "-s", "120", "--stdin", "--stdout"},
	ModeFast:     {"-b", "1", "-v", "en-us", "-s", "220", "--stdin", "--stdout"},
}

// lameArgs encode the WAV on standard input as 48 kbit/s mono MP3 on
// standard output.
var lameArgs = []string{"--quiet", "-m", "m", "-b", "48", "-", "-"}

// espeak is the offline backend: espeak-ng piped into lame.
type espeak struct {
	espeakPath, lamePath string
}

// Install tells how to get the tools when they are missing.
const Install = "install them from Debian: apt-get install espeak-ng lame (make tools does it)"

func newEspeak(espeakPath, lamePath string) (*espeak, error) {
	find := func(path, name string) (string, error) {
		if path == "" {
			path = name
		}
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w: %s not found (%v); %s", ErrToolsMissing, name, err, Install)
		}
		return p, nil
	}
	e, err := find(espeakPath, "espeak-ng")
	if err != nil {
		return nil, err
	}
	l, err := find(lamePath, "lame")
	if err != nil {
		return nil, err
	}
	return &espeak{espeakPath: e, lamePath: l}, nil
}

func (e *espeak) Name() string { return "espeak-ng" }

// command prepares a tool to run in its own process group, with a fixed
// environment (nothing of the server's environment reaches it), killed as
// a group when ctx ends.
func command(ctx context.Context, path string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = []string{"LC_ALL=C.UTF-8", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	return cmd
}

// Synthesize runs espeak-ng | lame with the text on espeak-ng's standard
// input.
func (e *espeak) Synthesize(ctx context.Context, mode Mode, text string) ([]byte, error) {
	args, ok := espeakArgs[mode]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrInvalidMode, mode)
	}
	speak := command(ctx, e.espeakPath, args...)
	encode := command(ctx, e.lamePath, lameArgs...)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: pipe: %v", ErrSynthesis, err)
	}
	var out limitedBuffer
	var speakErr, encodeErr bytes.Buffer
	speak.Stdin = strings.NewReader(text)
	speak.Stdout, speak.Stderr = pw, &speakErr
	encode.Stdin, encode.Stdout, encode.Stderr = pr, &out, &encodeErr
	out.limit = maxMP3Bytes
	if err := speak.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("%w: start espeak-ng: %v", ErrSynthesis, err)
	}
	pw.Close() // the child holds its own copy
	if err := encode.Start(); err != nil {
		pr.Close()
		speak.Cancel()
		speak.Wait()
		return nil, fmt.Errorf("%w: start lame: %v", ErrSynthesis, err)
	}
	pr.Close()
	errSpeak, errEncode := speak.Wait(), encode.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, ErrTimeout
	case errSpeak != nil:
		return nil, fmt.Errorf("%w: espeak-ng: %v: %s", ErrSynthesis, errSpeak, firstLine(speakErr.String()))
	case errEncode != nil:
		return nil, fmt.Errorf("%w: lame: %v: %s", ErrSynthesis, errEncode, firstLine(encodeErr.String()))
	case out.over:
		return nil, fmt.Errorf("%w: lame wrote more than %d bytes", ErrSynthesis, maxMP3Bytes)
	}
	return out.Bytes(), nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// limitedBuffer keeps at most limit bytes and notes when more came; the
// writer never fails, so the encoder is not killed by a broken pipe.
type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		b.over = true
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

var _ io.Writer = (*limitedBuffer)(nil)
