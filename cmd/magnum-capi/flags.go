package main

import (
	"errors"
	"flag"
)

// parseFlags parses args with fs, as every command does: done is true when
// the command ends here, with exit 0 after --help or -h (usage was asked
// for and printed) and 2 after a flag error (usage printed with it).
func parseFlags(fs *flag.FlagSet, args []string) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0, true
	case err != nil:
		return 2, true
	}
	return 0, false
}
