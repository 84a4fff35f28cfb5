//! `terrasynth sample` and `terrasynth noise`: evaluate a noise spec at points from stdin, or
//! write it to a 16-bit grayscale PNG.

use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use terrasynth::Heightmap;
use terrasynth::noise::{Noise, NoiseFn, NoiseSpec, Region};

use crate::generate::parse_size;

/// Arguments of `terrasynth sample`.
#[derive(Args, Debug)]
pub struct SampleArgs {
    /// The noise, as an inline TOML table (e.g. `kind = "perlin", seed = "reference"`), or
    /// `help` to list kinds and parameters.
    #[arg(long)]
    pub noise: String,
}

/// Arguments of `terrasynth noise`.
#[derive(Args, Debug)]
pub struct NoiseArgs {
    /// The noise, as an inline TOML table, or `help` to list kinds and parameters.
    #[arg(long)]
    pub noise: String,
    /// Image size in samples, `WxH` or `N` for a square (e.g. `512x512`), each side in
    /// 2..=32769 (as `generate --size`).
    #[arg(long, default_value = "512x512")]
    pub size: String,
    /// Sample-space position of the top-left pixel, `X,Y`.
    #[arg(long, default_value = "0,0", allow_hyphen_values = true)]
    pub origin: String,
    /// Sample-space distance between neighbouring pixels (> 0).
    #[arg(long, default_value_t = 1.0 / 64.0)]
    pub spacing: f64,
    /// Output PNG (16-bit grayscale, normalised over the map's own min/max).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Parses and builds the spec; `None` when it is `help` (the help was printed).
fn build_noise(spec: &str) -> anyhow::Result<Option<Noise>> {
    if spec.trim() == "help" {
        print!("{}", NoiseSpec::help());
        return Ok(None);
    }
    let noise = NoiseSpec::from_inline_toml(spec).and_then(|s| s.build()).context("--noise")?;
    Ok(Some(noise))
}

/// `terrasynth sample`: reads `x y` or `x y z` per line on stdin (blank lines are skipped),
/// prints one value per line with 17 significant digits (`{:.16e}`, which round-trips f64).
pub fn run_sample(args: &SampleArgs) -> anyhow::Result<()> {
    let Some(noise) = build_noise(&args.noise)? else { return Ok(()) };
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (index, line) in stdin.lines().enumerate() {
        let number = index + 1;
        let line = line.with_context(|| format!("reading stdin line {number}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let value = sample_line(&noise, &line).with_context(|| format!("stdin line {number}"))?;
        writeln!(out, "{value:.16e}")?;
    }
    out.flush()?;
    Ok(())
}

/// Evaluates one `x y` / `x y z` line.
fn sample_line(noise: &Noise, line: &str) -> anyhow::Result<f64> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let mut coords = Vec::with_capacity(3);
    for f in &fields {
        match f.parse::<f64>() {
            Ok(v) if v.is_finite() => coords.push(v),
            _ => bail!("expected `x y` or `x y z` (finite numbers), got {:?}", line.trim()),
        }
    }
    match coords[..] {
        [x, y] => Ok(noise.get2(x, y)),
        [x, y, z] => Ok(noise.get3(x, y, z)?),
        _ => bail!("expected `x y` or `x y z` (finite numbers), got {:?}", line.trim()),
    }
}

/// Parses `X,Y` (finite).
fn parse_origin(text: &str) -> anyhow::Result<(f64, f64)> {
    let parsed = text
        .split_once(',')
        .and_then(|(x, y)| Some((x.trim().parse::<f64>().ok()?, y.trim().parse::<f64>().ok()?)))
        .filter(|(x, y)| x.is_finite() && y.is_finite());
    parsed.with_context(|| format!("--origin {text:?}: expected X,Y (finite numbers), e.g. 0,0"))
}

/// `terrasynth noise`: fills a `W×H` map (pixel `(i, j)` at `origin + (i, j)·spacing`) with
/// [`Noise::fill`], writes it as a 16-bit PNG normalised over the map's own min/max (a flat map
/// writes all zeros), and prints `min <v> max <v>`.
pub fn run_noise(args: &NoiseArgs) -> anyhow::Result<()> {
    let Some(noise) = build_noise(&args.noise)? else { return Ok(()) };
    let (width, height) = parse_size(&args.size)?;
    let (x0, y0) = parse_origin(&args.origin)?;
    if !(args.spacing.is_finite() && args.spacing > 0.0) {
        bail!("--spacing {}: expected a finite number > 0", args.spacing);
    }
    let Some(path) = &args.out else { bail!("--out FILE.png is required") };
    terrasynth::grid::check_size::<f32>(width, height).context("--size")?;
    let region = Region { x0, y0, dx: args.spacing, dy: args.spacing, width, height };
    let mut map = Heightmap::new(width, height, 1.0)?;
    let (min, max) = noise.fill(&region, map.as_mut_slice())?;
    let hi = if max > min { max } else { min + 1.0 };
    terrasynth::io::png::write_png16(path, &map, min, hi)
        .with_context(|| format!("writing {}", path.display()))?;
    println!("min {min} max {max}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_origins() {
        assert_eq!(parse_origin("-3.5, 2").unwrap(), (-3.5, 2.0));
        assert!(parse_origin("nan,0").is_err());
    }
}
