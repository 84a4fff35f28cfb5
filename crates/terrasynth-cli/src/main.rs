//! `terrasynth`: the command-line tool. Parses flags, validates them, calls the library.
//! Every error becomes one line on stderr and exit code 2 (no backtrace).

mod noise_cmd;

use clap::{Parser, Subcommand};

/// Procedural terrain generator.
#[derive(Parser, Debug)]
#[command(name = "terrasynth", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Evaluate a noise at points read from stdin (`x y` or `x y z` per line).
    Sample(noise_cmd::SampleArgs),
    /// Write a noise to a 16-bit grayscale PNG and print its min/max.
    Noise(noise_cmd::NoiseArgs),
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sample(args) => noise_cmd::run_sample(&args),
        Command::Noise(args) => noise_cmd::run_noise(&args),
    }
}

fn main() {
    let cli = Cli::parse();
    if let Err(err) = run(cli) {
        // One clear line: the error and its causes, joined.
        let mut line = err.to_string();
        for cause in err.chain().skip(1) {
            let c = cause.to_string();
            if !line.contains(&c) {
                line.push_str(": ");
                line.push_str(&c);
            }
        }
        eprintln!("terrasynth: error: {line}");
        std::process::exit(2);
    }
}
