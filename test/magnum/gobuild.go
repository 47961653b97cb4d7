package magnum

import (
	"context"
	"os"
	"os/exec"

	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// goBuild builds a package of this repository, statically as the operator
// guide's build of the sidecar does.
func goBuild(ctx context.Context, out, pkg string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = testbed.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd.CombinedOutput()
}
