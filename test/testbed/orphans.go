package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// orphanGuard kills a test bed's processes when the process that started it
// dies without stopping it: a go test binary killed by its -timeout (or by
// SIGKILL) runs no deferred Stop, and envtest's kube-apiserver and etcd, in
// process groups of their own, would run on reparented to init, holding ports
// and memory for the runs after it.
//
// The guard is a shell reading a pipe whose only writer is this process. The
// kernel closes the writer however this process ends, so the read returns:
// "release" (Stop ran) ends the guard; end of file kills every process whose
// command line names the test bed's directory — kube-apiserver's
// certificates and etcd's data live there, so a restarted kube-apiserver is
// covered without telling the guard its new pid.
type orphanGuard struct {
	writer *os.File
	cmd    *exec.Cmd
}

// guardScript reads one line; on anything but "release" it SIGKILLs the
// marked processes. The marker comes from the environment, not argv, so the
// guard's own command line never matches it.
const guardScript = `read line
[ "$line" = release ] && exit 0
for d in /proc/[0-9]*; do
	case "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)" in
	*"$MARKER"*) kill -KILL "${d#/proc/}" 2>/dev/null ;;
	esac
done
exit 0`

// startOrphanGuard guards every process whose command line contains marker.
func startOrphanGuard(marker string) (*orphanGuard, error) {
	reader, writer, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", "-c", guardScript)
	cmd.Env = []string{"MARKER=" + marker, "PATH=/usr/bin:/bin"}
	cmd.Stdin = reader
	// A process group of its own: a Ctrl-C to go test must not take the
	// guard down before it has done its work.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		reader.Close()
		writer.Close()
		return nil, fmt.Errorf("starting the orphan guard: %w", err)
	}
	reader.Close()
	return &orphanGuard{writer: writer, cmd: cmd}, nil
}

// release ends the guard without killing anything: the test bed stopped.
func (g *orphanGuard) release() error {
	if g == nil {
		return nil
	}
	_, werr := g.writer.WriteString("release\n")
	g.writer.Close()
	if err := g.cmd.Wait(); err != nil {
		return fmt.Errorf("orphan guard: %w", err)
	}
	return werr
}
