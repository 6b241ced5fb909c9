package main

import (
	"context"

	"github.com/lazyvi/lazyvi/framework"
)

func newHelpCommand() *Command {
	var long bool
	cmd := &Command{
		UsageLine: "help [--long] [command]",
		Short:     "show help for vi or a command",
		Long:      `Help shows the list of commands, or with a command name, its synopsis, usage, examples and flags; --long adds its description.`,
	}
	cmd.Flag.BoolVar(&long, "long", false, "add the command's description")
	cmd.Run = func(ctx context.Context, a *app, args []string) error { return runHelp(a, args, long) }
	return cmd
}

func runHelp(a *app, args []string, long bool) error {
	switch len(args) {
	case 0:
		a.printMainUsage(a.stdout)
		return nil
	case 1:
		c := a.lookupCommand(args[0])
		if c == nil {
			return framework.Usagef("help: unknown command %q (run 'vi help' for the list)", args[0])
		}
		c.Usage(a.stdout, long)
		return nil
	}
	return framework.Usagef("help: too many arguments (usage: vi help [--long] [command])")
}
