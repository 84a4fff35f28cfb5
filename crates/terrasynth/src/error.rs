use std::path::PathBuf;

use thiserror::Error;

/// Result alias for the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error the library returns, sorted by cause.
#[derive(Debug, Error)]
pub enum Error {
    /// A parameter is outside its allowed range, or is NaN/infinite.
    #[error("invalid parameter `{name}` = {value}: allowed {allowed}")]
    InvalidParameter {
        /// Parameter name as a user writes it.
        name: String,
        /// The value given, formatted.
        value: String,
        /// The allowed range or set, in words.
        allowed: String,
    },
    /// A grid size that is zero, absurd, or whose buffers would not fit in memory.
    #[error("invalid size {width}x{height}: {reason}")]
    InvalidSize {
        /// Requested width in cells.
        width: usize,
        /// Requested height in cells.
        height: usize,
        /// Why it is refused, with the allowed range.
        reason: String,
    },
    /// Two grids that must have the same size do not.
    #[error("size mismatch: {what} is {got_w}x{got_h} but {expected_w}x{expected_h} is needed")]
    SizeMismatch {
        /// What was mismatched.
        what: String,
        /// Expected width.
        expected_w: usize,
        /// Expected height.
        expected_h: usize,
        /// Actual width.
        got_w: usize,
        /// Actual height.
        got_h: usize,
    },
    /// A noise could not be built.
    #[error(transparent)]
    Noise(#[from] terrasynth_noise::NoiseError),
    /// A recipe that does not validate: every problem found, each with its step, key and
    /// allowed range (joined by "; " in the message).
    #[error("invalid recipe: {}", join_problems(.0))]
    Recipe(Vec<Problem>),
    /// A recipe (or project) file that does not parse: a syntax error or a value of the wrong
    /// type, at a line and column when known.
    #[error(
        "invalid recipe: {}{format}{}: {message}",
        .path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default(),
        .line_col.map(|(l, c)| format!(" line {l}, column {c}")).unwrap_or_default()
    )]
    Syntax {
        /// The file, when the text came from one.
        path: Option<PathBuf>,
        /// `TOML` or `JSON`.
        format: &'static str,
        /// 1-based line and column of the problem, when the parser gives them.
        line_col: Option<(usize, usize)>,
        /// What the parser says.
        message: String,
    },
    /// A step type that is not in the registry (or not of the kind asked for).
    #[error("unknown step type `{name}` (known: {})", list_or_none(.known))]
    UnknownStep {
        /// The name given.
        name: String,
        /// The names allowed.
        known: Vec<String>,
    },
    /// A preset name that is not built in.
    #[error("unknown preset `{name}` (known: {})", list_or_none(.known))]
    UnknownPreset {
        /// The name given.
        name: String,
        /// The built-in presets.
        known: Vec<String>,
    },
    /// A step of a validated pipeline failed while running.
    #[error("step {step} ({name}) failed: {source}")]
    Step {
        /// 1-based position of the step in the recipe.
        step: usize,
        /// The step's type.
        name: String,
        /// Why it failed.
        source: Box<Error>,
    },
    /// A value could not be written as text (TOML, JSON, a project file).
    #[error("cannot write {what}: {message}")]
    Encode {
        /// What was being written, e.g. `TOML`.
        what: String,
        /// What the encoder says.
        message: String,
    },
    /// A worker thread pool could not be started.
    #[error("cannot start {threads} worker threads: {message}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// What the system says.
        message: String,
    },
    /// A file could not be decoded: corrupt, truncated, or of the wrong kind.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// An I/O error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A terrain that cannot be exported (empty, or with non-finite heights or sea level).
    #[error("{reason}")]
    InvalidTerrain {
        /// What is wrong, in words.
        reason: String,
    },
    /// A `mesh.glb` would be over glTF's 4 GiB limit (checked before anything is written).
    #[error(
        "mesh.glb of a {width}x{height} map at lod {lod} would be {gib:.2} GiB, over the 4 GiB limit of GLB: \
         use --lod {min_lod} or more (or exports.lod), or set exports.glb = false"
    )]
    GlbTooLarge {
        /// Map width in cells.
        width: usize,
        /// Map height in cells.
        height: usize,
        /// The mesh LOD asked for.
        lod: u32,
        /// The GLB's size in GiB.
        gib: f64,
        /// The smallest LOD whose GLB fits.
        min_lod: u32,
    },
    /// A step that cannot run on a window of an endless world (a global step: its result
    /// depends on the whole map), or a world operation asked of a recipe that is not a world.
    #[error("{what}")]
    NotInWorld {
        /// What cannot be done and why, in words.
        what: String,
    },
    /// The job was cancelled through its [`crate::Progress`].
    #[error("cancelled")]
    Cancelled,
}

impl Error {
    /// An invalid recipe with one problem described by `message` (no step, key or range).
    pub fn recipe(message: impl Into<String>) -> Self {
        Error::Recipe(vec![Problem::message(message)])
    }

    /// Shorthand for [`Error::InvalidParameter`].
    pub fn param(name: impl Into<String>, value: impl std::fmt::Display, allowed: impl Into<String>) -> Self {
        Error::InvalidParameter { name: name.into(), value: value.to_string(), allowed: allowed.into() }
    }
}

/// One problem found in a recipe: where it is (step and key), what is wrong, and the allowed
/// range when there is one. Displayed as ``step 2 (diamond-square): invalid parameter
/// `roughness` = -1: allowed a number in [0, 4]``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The step: 1-based position in the recipe and its type; `None` for recipe-level fields.
    pub step: Option<(usize, String)>,
    /// The key of the bad value (a step parameter, or a recipe field such as `exports.lod`),
    /// when the problem is one value.
    pub field: Option<String>,
    /// What is wrong, e.g. ``invalid parameter `roughness` = -1`` or ``unknown step type `x`
    /// (known: …)``.
    pub message: String,
    /// The allowed range or set, in words, when there is one.
    pub allowed: Option<String>,
}

impl Problem {
    /// A problem told by its message only.
    pub fn message(message: impl Into<String>) -> Self {
        Problem { step: None, field: None, message: message.into(), allowed: None }
    }

    /// A bad value: key `field` is `value`, outside `allowed`.
    pub fn value(field: &str, value: impl std::fmt::Display, allowed: impl Into<String>) -> Self {
        Problem {
            step: None,
            field: Some(field.to_string()),
            message: format!("invalid `{field}` = {value}"),
            allowed: Some(allowed.into()),
        }
    }

    /// The problem an error describes: an [`Error::InvalidParameter`] keeps its key and range,
    /// any other error becomes a message.
    pub fn from_error(error: Error) -> Self {
        match error {
            Error::InvalidParameter { name, value, allowed } => Problem {
                step: None,
                message: format!("invalid parameter `{name}` = {value}"),
                field: Some(name),
                allowed: Some(allowed),
            },
            other => Problem::message(other.to_string()),
        }
    }

    /// The same problem, placed in step `index` (1-based) of type `kind`.
    pub fn in_step(self, index: usize, kind: &str) -> Self {
        Problem { step: Some((index, kind.to_string())), ..self }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some((index, kind)) = &self.step {
            write!(f, "step {index} ({kind}): ")?;
        }
        f.write_str(&self.message)?;
        if let Some(allowed) = &self.allowed {
            write!(f, ": allowed {allowed}")?;
        }
        Ok(())
    }
}

/// Problems as one line, joined by "; ".
pub fn join_problems(problems: &[Problem]) -> String {
    problems.iter().map(Problem::to_string).collect::<Vec<_>>().join("; ")
}

/// `a, b, c`, or `none`.
fn list_or_none(names: &[String]) -> String {
    if names.is_empty() { "none".into() } else { names.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_read_as_before() {
        let p = Problem::from_error(Error::param("roughness", -1, "a number in [0, 4]")).in_step(2, "mdp");
        assert_eq!(
            p.to_string(),
            "step 2 (mdp): invalid parameter `roughness` = -1: allowed a number in [0, 4]"
        );
        assert_eq!(
            (p.field.as_deref(), p.allowed.as_deref()),
            (Some("roughness"), Some("a number in [0, 4]"))
        );
        let q = Problem::value("exports.lod", 99, "an integer in 0..=8");
        assert_eq!(q.to_string(), "invalid `exports.lod` = 99: allowed an integer in 0..=8");
        let e = Error::Recipe(vec![p, q]);
        assert_eq!(
            e.to_string(),
            "invalid recipe: step 2 (mdp): invalid parameter `roughness` = -1: allowed a number in [0, 4]; \
             invalid `exports.lod` = 99: allowed an integer in 0..=8"
        );
        let s = Error::Syntax {
            path: Some("r.toml".into()),
            format: "TOML",
            line_col: Some((2, 7)),
            message: "expected a value".into(),
        };
        assert_eq!(s.to_string(), "invalid recipe: r.toml: TOML line 2, column 7: expected a value");
        let s = Error::Syntax { path: None, format: "TOML", line_col: None, message: "x".into() };
        assert_eq!(s.to_string(), "invalid recipe: TOML: x");
        let u = Error::UnknownStep { name: "x".into(), known: vec![] };
        assert_eq!(u.to_string(), "unknown step type `x` (known: none)");
    }
}
