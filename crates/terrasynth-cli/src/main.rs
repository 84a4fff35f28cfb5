//! `terrasynth`: the command-line tool. Parses flags, validates them, calls the library.
//! Every error becomes one line on stderr and exit code 2 (no backtrace).

mod analyze;
mod eval;
mod generate;
mod listing;
mod noise_cmd;
mod tiles;

use clap::{Parser, Subcommand};

/// Counts heap allocations so pipelines and `eval` can report peak memory per step
/// (see `terrasynth::memory`).
#[global_allocator]
static ALLOC: terrasynth::memory::CountingAlloc = terrasynth::memory::CountingAlloc;

/// Procedural terrain generator.
#[derive(Parser, Debug)]
#[command(name = "terrasynth", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a preset or recipe and write heightmaps, images, a mesh and report.json.
    Generate(generate::GenerateArgs),
    /// Write a world recipe as a set of seamless tiles for game engines, plus world.json.
    Tiles(tiles::TilesArgs),
    /// List the built-in presets with their descriptions.
    Presets,
    /// Print a built-in preset as TOML, to edit and pass back with `generate --recipe`.
    Recipe(listing::RecipeArgs),
    /// List the step types with every parameter's default, range, unit and doc.
    Steps(listing::StepsArgs),
    /// Realism figures of a map (spectral slope, slopes, drainage, Hack's law, isotropy).
    Analyze(analyze::AnalyzeArgs),
    /// Time every generator at several sizes, check determinism, realism figures, and every
    /// step under extreme parameters.
    Eval(eval::EvalArgs),
    /// Evaluate a noise at points read from stdin (`x y` or `x y z` per line).
    Sample(noise_cmd::SampleArgs),
    /// Write a noise to a 16-bit grayscale PNG and print its min/max.
    Noise(noise_cmd::NoiseArgs),
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Generate(args) => generate::run(&args),
        Command::Tiles(args) => tiles::run(&args),
        Command::Presets => listing::run_presets(),
        Command::Recipe(args) => listing::run_recipe(&args),
        Command::Steps(args) => listing::run_steps(&args),
        Command::Analyze(args) => analyze::run(&args),
        Command::Eval(args) => eval::run(&args),
        Command::Sample(args) => noise_cmd::run_sample(&args),
        Command::Noise(args) => noise_cmd::run_noise(&args),
    }
}

/// Exit code after Ctrl-C (128 + SIGINT, the shell convention).
const EXIT_INTERRUPTED: i32 = 130;

/// What Ctrl-C cancels: the job of the last [`cancel_on_ctrl_c`] call.
type CancelFn = Box<dyn Fn() + Send>;
static ON_CTRL_C: std::sync::Mutex<Option<CancelFn>> = std::sync::Mutex::new(None);

/// Makes Ctrl-C (SIGINT; also SIGTERM and SIGHUP) cancel the running job through `cancel`: the pipeline
/// and the export stop at their next check, atomic writes remove their temporary files, and
/// the command exits with code 130 (see [`main`]). A second Ctrl-C exits at once. The signal
/// handler is installed once; a later call replaces what it cancels.
pub fn cancel_on_ctrl_c(cancel: impl Fn() + Send + 'static) -> anyhow::Result<()> {
    static INSTALLED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    if let Ok(mut slot) = ON_CTRL_C.lock() {
        *slot = Some(Box::new(cancel));
    }
    INSTALLED
        .get_or_init(|| {
            let pressed = std::sync::atomic::AtomicBool::new(false);
            ctrlc::set_handler(move || {
                if pressed.swap(true, std::sync::atomic::Ordering::SeqCst) {
                    std::process::exit(EXIT_INTERRUPTED);
                }
                if let Ok(slot) = ON_CTRL_C.lock()
                    && let Some(cancel) = slot.as_ref()
                {
                    cancel();
                }
            })
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| anyhow::anyhow!("cannot install the Ctrl-C handler: {e}"))
}

/// Prints `terrasynth: error: <line>` and exits with code 2.
fn fail(line: &str) -> ! {
    eprintln!("terrasynth: error: {line}");
    std::process::exit(2);
}

fn main() {
    // One job per process: freed grids are kept for the next step's (fewer page faults).
    terrasynth::memory::keep_freed_memory();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => err.exit(), // --help, --version
        Err(err) => {
            // clap's message spans several lines (usage, hint): keep its first, one line.
            let text = err.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            fail(first.trim_start_matches("error: "));
        }
    };
    if let Err(err) = run(cli) {
        if matches!(err.downcast_ref::<terrasynth::Error>(), Some(terrasynth::Error::Cancelled)) {
            eprintln!("terrasynth: interrupted: stopped before finishing; no partial file was left");
            std::process::exit(EXIT_INTERRUPTED);
        }
        // One clear line: the error and its causes, joined.
        let mut line = err.to_string();
        for cause in err.chain().skip(1) {
            let c = cause.to_string();
            if !line.contains(&c) {
                line.push_str(": ");
                line.push_str(&c);
            }
        }
        fail(&line.replace('\n', " "));
    }
}
