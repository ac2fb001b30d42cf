// The moonrunner command line: a thin dispatcher to subcommands.
print("moonrunner")
