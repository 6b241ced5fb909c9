package main

import (
	"context"
	"io"
)

// The commands that list what vi has (backends, estimators, measures) or
// print its version take no arguments and write to stdout.

// listCommand makes c a command that takes no arguments and writes list to
// stdout.
func listCommand(c *Command, list func(w io.Writer) error) *Command {
	c.Run = func(_ context.Context, a *app, args []string) error {
		if err := noArgs(c, args); err != nil {
			return err
		}
		return list(a.stdout)
	}
	return c
}
