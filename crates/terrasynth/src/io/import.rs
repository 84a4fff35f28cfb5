//! The `import` step: start a recipe from a heightmap file (a generator).
//!
//! Heights: integer formats (PNG 8/16-bit, R16/RAW, u8/u16 TIFF) read as fractions in [0, 1];
//! float formats (EXR, f32 TIFF) keep their values; then every height is multiplied by `scale`.
//!
//! Size: when the file's size differs from the recipe's map size, `resize = "resample"`
//! (default) resamples bilinearly to the recipe size, corners onto corners
//! ([`crate::Heightmap::resample`]); `resize = "error"` refuses with a size-mismatch error. The
//! terrain keeps the recipe's cell size either way.

use super::{FileFormat, ReadOptions, read_heightmap};
use crate::step::params::{Choice, ParamField, choice_enum, step_params};
use crate::step::{Category, Step, StepContext, StepInfo, Terrain};
use crate::step::{DefaultValue, ParamKind, ParamValue, Params};
use crate::{Error, Result};

choice_enum! {
    /// What the `import` step does when the file's size differs from the map size.
    pub enum Resize {
        /// Resample bilinearly to the map size, corners onto corners.
        Resample = "resample",
        /// Refuse with a size-mismatch error.
        Error = "error",
    }
}

/// A [`FileFormat`] as a choice parameter: its recipe names are [`FileFormat::NAMES`].
impl ParamField for FileFormat {
    fn read(p: &Params, name: &str) -> Result<Self> {
        let text = p.text(name)?;
        Self::from_name(text).ok_or_else(|| {
            Error::param(name, format!("{text:?}"), format!("one of {}", Self::NAMES.join(", ")))
        })
    }
    fn to_value(&self) -> ParamValue {
        let name = Self::NAMES.iter().find(|n| Self::from_name(n) == Some(*self)).copied().unwrap_or("auto");
        ParamValue::Text(name.to_string())
    }
}

step_params! {
    /// The runnable `import` step (see the module docs).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Import {
        path: String = ParamSpec {
            name: "path",
            label: "File",
            kind: ParamKind::Text,
            default: DefaultValue::Text(""),
            unit: "",
            doc: "Heightmap file to read (required); a relative path is relative to the recipe or \
                  project file's folder (the working directory for presets and recipes from text).",
        },
        format: FileFormat = ParamSpec {
            name: "format",
            label: "Format",
            kind: ParamKind::Choice(FileFormat::NAMES),
            default: DefaultValue::Text("auto"),
            unit: "",
            doc: "File format; auto detects it from the signature, then the extension.",
        },
        width: usize = ParamSpec {
            name: "width",
            label: "Raw width",
            kind: ParamKind::Int { min: 0, max: crate::grid::MAX_SIDE as u64 },
            default: DefaultValue::Number(0.0),
            unit: "cells",
            doc: "Width of a headerless R16/RAW file; 0 infers a square from the file size.",
        },
        height: usize = ParamSpec {
            name: "height",
            label: "Raw height",
            kind: ParamKind::Int { min: 0, max: crate::grid::MAX_SIDE as u64 },
            default: DefaultValue::Number(0.0),
            unit: "cells",
            doc: "Height of a headerless R16/RAW file; 0 infers it from the size and width.",
        },
        scale: f32 = ParamSpec {
            name: "scale",
            label: "Height factor",
            kind: ParamKind::Float { min: -1.0e6, max: 1.0e6 },
            default: DefaultValue::Number(1.0),
            unit: "",
            doc: "Multiplies every height read (integer formats read as [0, 1]).",
        },
        resize: Resize = ParamSpec {
            name: "resize",
            label: "Resize",
            kind: ParamKind::Choice(Resize::NAMES),
            default: DefaultValue::Text("resample"),
            unit: "",
            doc: "When the file size differs from the map size: resample bilinearly, or fail.",
        },
    }
}

/// Registry entry of the `import` step.
pub const INFO: StepInfo = StepInfo {
    name: "import",
    category: Category::Generate,
    doc: "Start from a heightmap file: PNG 8/16-bit, R16/RAW (size given or square), EXR, TIFF. \
          Integer formats read as [0, 1], floats as stored, then times `scale`; a file of another \
          size is resampled bilinearly to the map size (or refused with resize = \"error\"). EXR \
          files compressed with DWAA/DWAB (lossy codecs for colour images) are refused.",
    source: "research/terrain-tools.md §4 (engine formats)",
    params: Import::PARAMS,
    build: |p| Ok(Box::new(Import::from_params(p)?)),
};

impl Import {
    /// A checked step: every field in its spec's range and a non-empty `path`.
    pub fn new(
        path: String,
        format: FileFormat,
        width: usize,
        height: usize,
        scale: f32,
        resize: Resize,
    ) -> Result<Self> {
        let s = Self { path, format, width, height, scale, resize };
        s.check_ranges()?;
        if s.path.trim().is_empty() {
            return Err(Error::param("path", "\"\"", "the path of a heightmap file"));
        }
        Ok(s)
    }

    /// From validated recipe parameters.
    pub fn from_params(p: &Params) -> Result<Self> {
        let Self { path, format, width, height, scale, resize } = Self::read_params(p)?;
        Self::new(path, format, width, height, scale, resize)
    }
}

impl Step for Import {
    fn run(&self, terrain: &mut Terrain, ctx: &StepContext) -> Result<()> {
        ctx.progress.check_cancelled()?;
        let read = ReadOptions { format: self.format, width: self.width, height: self.height };
        let mut map = read_heightmap(&self.path, &read)?;
        ctx.progress.set(0.5);
        let (w, h) = (terrain.height.width(), terrain.height.height());
        if !map.same_size(&terrain.height) {
            if self.resize == Resize::Error {
                return Err(Error::SizeMismatch {
                    what: format!("imported file {}", self.path),
                    expected_w: w,
                    expected_h: h,
                    got_w: map.width(),
                    got_h: map.height(),
                });
            }
            map = map.resample(w, h)?;
        }
        map.set_cell_size(terrain.height.cell_size())?;
        if self.scale != 1.0 {
            map.scale(self.scale, 0.0)?;
        }
        terrain.height = map;
        ctx.progress.set(1.0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::params::assert_ranges_enforced;

    /// `import` refuses exactly what its specs refuse (the constructor is what the recipe path
    /// calls), and an empty path.
    #[test]
    fn import_enforces_exactly_its_spec_ranges() {
        let base = || Params::defaults(Import::PARAMS).with("path", ParamValue::Text("map.png".into()));
        let build =
            |name: &str, v: f64| Import::from_params(&base().with(name, ParamValue::Number(v))).map(drop);
        assert_eq!(assert_ranges_enforced(Import::PARAMS, &build), 3, "width, height, scale");
        let imp = Import::from_params(&base()).unwrap();
        assert_eq!((imp.format, imp.resize, imp.scale), (FileFormat::Auto, Resize::Resample, 1.0));
        assert!(matches!(Import::from_params(&Params::defaults(Import::PARAMS)),
            Err(Error::InvalidParameter { name, .. }) if name == "path"));
        let tiff = Import::from_params(&base().with("format", ParamValue::Text("tiff".into()))).unwrap();
        assert_eq!(tiff.format.to_value(), ParamValue::Text("tiff".into()));
        for name in FileFormat::NAMES {
            let f = FileFormat::from_name(name).unwrap();
            assert_eq!(f.to_value(), ParamValue::Text(name.to_string()));
        }
    }
}
