package debianroot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// lockSuite holds an exclusive lock on the suite's lock file in the roots
// directory until the returned function is called, waiting for another
// process's build to end first. The kernel drops the lock when its holder
// dies, so a killed build never blocks the next.
func lockSuite(ctx context.Context, dir, suite string, logf func(string, ...any)) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, suite+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	told := false
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if !told {
				logf("waiting for another process building the Debian %s root file system", suite)
				told = true
			}
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the Debian %s root file system: %w", suite, err)
	}
	return func() { f.Close() }, nil
}
