package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/magnum-capi/magnum-capi/server"
	"github.com/magnum-capi/magnum-capi/server/config"
)

// runServe reads the configuration (file, then MAGNUM_CAPI_* variables, then
// flags; docs/configuration.md lists every option), validates all of it, and
// runs the sidecar until SIGTERM or SIGINT.
func runServe(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", os.Getenv("MAGNUM_CAPI_CONFIG"), "configuration file (YAML); MAGNUM_CAPI_* variables and flags override it (env MAGNUM_CAPI_CONFIG)")
	v := viper.New()
	if err := config.BindFlags(fs, v); err != nil {
		fmt.Fprintln(stderr, "magnum-capi serve:", err)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "magnum-capi serve:", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "magnum-capi serve: unexpected arguments %q (options are flags: --listen ADDRESS, ...)\n", fs.Args())
		return 2
	}
	cfg, err := config.Load(*file, v)
	if err != nil {
		fmt.Fprintln(stderr, "magnum-capi serve:", err)
		return 2
	}
	out, closeLog, err := logOutput(cfg.Log, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "magnum-capi serve:", err)
		return 2
	}
	defer closeLog()
	log := newLogger(cfg.Log, out)
	routeLibraryLogs(log)
	// A process-wide setting, so here rather than in server.New (which
	// tests run inside their own processes).
	debug.SetGCPercent(cfg.GCPercent)
	sidecar, err := server.New(cfg, log)
	if err != nil {
		if cfg.Log.File != "" {
			// Also where `docker logs` and `systemctl status` look first.
			fmt.Fprintln(stderr, "magnum-capi serve: not started (see", cfg.Log.File+"):", err)
		}
		return startFailed(log, err)
	}
	defer sidecar.Close()
	if err := sidecar.Serve(ctx); err != nil {
		log.Error("sidecar stopped", "err", err)
		return 1
	}
	return 0
}

// startFailed is serve's exit code when the sidecar could not be assembled:
// 2 for a configuration (or host) problem naming its option, which the
// unit's RestartPreventExitStatus does not restart forever; 1 for anything
// else (a management API down at start), which a restart may cure.
func startFailed(log *slog.Logger, err error) int {
	var oe *config.OptionError
	if errors.As(err, &oe) {
		log.Error("sidecar not started: fix configuration option "+oe.Option, "err", err)
		return 2
	}
	log.Error("sidecar not started", "err", err)
	return 1
}

// routeLibraryLogs sends what client-go (klog) and controller-runtime log
// through the sidecar's own logger: one JSON object per line, at the
// configured level. Without it controller-runtime prints a multi-line
// "log.SetLogger(...) was never called" stack trace into the log on its
// first message, and klog writes its own text format. Process-wide, like
// the GC setting.
func routeLibraryLogs(log *slog.Logger) {
	ctrllog.SetLogger(logr.FromSlogHandler(log.Handler()))
	klog.SetSlogLogger(log)
}

// logOutput is where the log goes: log.file opened for appending (so that
// logrotate's copytruncate works: each line is written at the file's end),
// or stderr. The error names the option (serve exits 2 on it).
func logOutput(c config.Log, stderr io.Writer) (io.Writer, func(), error) {
	if c.File == "" {
		return stderr, func() {}, nil
	}
	f, err := os.OpenFile(c.File, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, nil, config.Problem("log.file", c.File, fmt.Errorf("cannot be opened for appending: %w", err))
	}
	return f, func() { _ = f.Close() }, nil
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
