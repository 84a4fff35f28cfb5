//! `terrasynth presets`, `terrasynth recipe PRESET`, `terrasynth steps [NAME]`: listings
//! generated from the embedded presets and the registry's `ParamSpec`s.

use std::fmt::Write as _;

use clap::Args;
use terrasynth::recipe::{Pipeline, preset, presets, registry};
use terrasynth::step::StepInfo;

/// Arguments of `terrasynth recipe`.
#[derive(Args, Debug)]
pub struct RecipeArgs {
    /// Preset name (see `terrasynth presets`).
    pub preset: String,
    /// Print every step parameter, defaults filled in, instead of the commented preset file.
    #[arg(long)]
    pub resolved: bool,
}

/// Arguments of `terrasynth steps`.
#[derive(Args, Debug)]
pub struct StepsArgs {
    /// Only this step type.
    pub name: Option<String>,
}

pub fn run_presets() -> anyhow::Result<()> {
    let width = presets().iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for p in presets() {
        let r = p.recipe()?;
        let default = if p.name == terrasynth::recipe::presets::DEFAULT_PRESET { " (default)" } else { "" };
        writeln!(out, "{:width$}  {}{default}", p.name, r.description)?;
    }
    print!("{out}");
    Ok(())
}

pub fn run_recipe(args: &RecipeArgs) -> anyhow::Result<()> {
    let p = preset(&args.preset)?;
    if args.resolved {
        let reg = registry();
        let pipeline = Pipeline::new(p.recipe()?, &reg)?;
        print!("{}", pipeline.resolved_recipe(&reg).to_toml_string()?);
    } else {
        print!("{}", p.toml);
    }
    Ok(())
}

/// One step's help: header, doc, source, then one block per parameter.
pub fn describe_step(info: &StepInfo) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} ({:?})", info.name, info.category);
    let _ = writeln!(s, "    {}", info.doc);
    let _ = writeln!(s, "    source: {}", info.source);
    for p in info.params {
        let unit = if p.unit.is_empty() { String::new() } else { format!(" [{}]", p.unit) };
        let _ = writeln!(
            s,
            "    {} = {}{unit}  (allowed: {}; in the editor: {})\n        {}",
            p.name,
            p.default.to_value(),
            p.allowed(),
            p.label,
            p.doc
        );
    }
    s
}

pub fn run_steps(args: &StepsArgs) -> anyhow::Result<()> {
    let reg = registry();
    let chosen: Vec<&StepInfo> = match &args.name {
        Some(name) => {
            let Some(info) = reg.iter().find(|s| s.name == name) else {
                let known: Vec<_> = reg.iter().map(|s| s.name).collect();
                anyhow::bail!("unknown step type `{name}` (known: {})", known.join(", "));
            };
            vec![info]
        }
        None => reg.iter().collect(),
    };
    let text: Vec<String> = chosen.into_iter().map(describe_step).collect();
    print!("{}", text.join("\n"));
    Ok(())
}
