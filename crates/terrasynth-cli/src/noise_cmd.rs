//! `terrasynth sample` and `terrasynth noise`.

use clap::Args;

/// Arguments of `terrasynth sample`.
#[derive(Args, Debug)]
pub struct SampleArgs {
    /// The noise, as an inline TOML table, or `help` to list kinds and parameters.
    #[arg(long)]
    pub noise: String,
}

/// Arguments of `terrasynth noise`.
#[derive(Args, Debug)]
pub struct NoiseArgs {
    /// The noise, as an inline TOML table, or `help` to list kinds and parameters.
    #[arg(long)]
    pub noise: String,
}

pub fn run_sample(_args: &SampleArgs) -> anyhow::Result<()> {
    anyhow::bail!("`sample` is not implemented yet")
}

pub fn run_noise(_args: &NoiseArgs) -> anyhow::Result<()> {
    anyhow::bail!("`noise` is not implemented yet")
}
