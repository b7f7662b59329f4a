use std::process::ExitCode;

fn main() -> ExitCode {
    tfimg::main()
}
