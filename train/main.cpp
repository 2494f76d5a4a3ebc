// gradiens-train: a whole training run from one validated JSON config.
#include "train/cli.h"

int main(int argc, char** argv) { return gradiens::train::run_cli(argc, argv); }
