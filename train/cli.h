// The gradiens-train command line (CLI11); main() calls run_cli.
#pragma once

namespace gradiens::train {

// Parses the command line and runs it: 0 on success, 2 on a user error (the
// message on stderr), 128 + the signal when SIGINT/SIGTERM stopped a run.
int run_cli(int argc, char** argv);

}  // namespace gradiens::train
