//! [`ParamSpec`]: the one description of every parameter (name, default, range, unit, doc),
//! used by validation, CLI help, the GUI's sliders and the docs, so they never disagree.
//! [`Params`] holds a step's validated values with typed getters.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Error, Problem, Result};

/// The kind and allowed range of one parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// A real number in `[min, max]`.
    Float {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// An integer in `[min, max]`.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value (unsigned, so a recipe seed can reach 2^64 − 1).
        max: u64,
    },
    /// true or false.
    Bool,
    /// One of a fixed set of names.
    Choice(&'static [&'static str]),
    /// A list of numbers, each in `[min, max]`, of length `min_len..=max_len`
    /// (curves, coefficient lists, centre lists).
    List {
        /// Smallest allowed element.
        min: f64,
        /// Largest allowed element.
        max: f64,
        /// Fewest elements.
        min_len: usize,
        /// Most elements.
        max_len: usize,
    },
    /// Free text (e.g. a file path for an import step).
    Text,
    /// Free text read from recipes for compatibility only (the noise step's inline `noise`
    /// spec, which older recipes and `blend` use): checked like [`ParamKind::Text`], listed in
    /// the docs, but the editor shows no widget for it (its typed parameters replace it).
    LegacyText,
}

/// One parameter's description.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// Key as written in a recipe.
    pub name: &'static str,
    /// Plain words the editor shows beside the widget, e.g. "Rain per iteration" for `kr`
    /// (sentence case, no unit: the unit is shown after the value).
    pub label: &'static str,
    /// Kind and allowed range.
    pub kind: ParamKind,
    /// Default value (as it would be written in a recipe).
    pub default: DefaultValue,
    /// Unit, or "" when unitless.
    pub unit: &'static str,
    /// One or two sentences: what it does, and its effect when raised. A parameter that only
    /// world recipes read starts its doc with "World recipes only" ([`ParamSpec::world_only`]).
    pub doc: &'static str,
}

/// A default value that can live in a `const`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    /// A number (floats and ints).
    Number(f64),
    /// A boolean.
    Bool(bool),
    /// A choice or text.
    Text(&'static str),
    /// A list of numbers.
    List(&'static [f64]),
    /// None: the parameter is optional and absent unless a recipe gives it (its key is
    /// omitted; TOML has no null). The step reads [`ParamValue::Absent`] as its own state
    /// (e.g. "the fractal's default"), never as a number, so the range stays `[min, max]`.
    Absent,
}

impl DefaultValue {
    /// As a [`ParamValue`].
    pub fn to_value(self) -> ParamValue {
        match self {
            DefaultValue::Number(v) => ParamValue::Number(v),
            DefaultValue::Bool(b) => ParamValue::Bool(b),
            DefaultValue::Text(s) => ParamValue::Text(s.to_string()),
            DefaultValue::List(l) => ParamValue::List(l.to_vec()),
            DefaultValue::Absent => ParamValue::Absent,
        }
    }
}

/// A parameter value as found in a recipe. Numbers with an integral value (below 2^53) are
/// written as integers, so `octaves = 6` survives a TOML round trip as `6`, not `6.0`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// true/false.
    Bool(bool),
    /// Any number (integers are stored exactly up to 2^53).
    Number(f64),
    /// A name or text.
    Text(String),
    /// A list of numbers.
    List(Vec<f64>),
    /// An optional parameter left out ([`DefaultValue::Absent`]). Written as none: a TOML
    /// table omits the key, JSON writes `null`.
    Absent,
}

impl Serialize for ParamValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            ParamValue::Bool(b) => s.serialize_bool(*b),
            ParamValue::Number(v) => serialize_number(*v, s),
            ParamValue::Text(t) => s.serialize_str(t),
            ParamValue::List(l) => {
                use serde::ser::SerializeSeq;
                let mut seq = s.serialize_seq(Some(l.len()))?;
                for v in l {
                    seq.serialize_element(&Number(*v))?;
                }
                seq.end()
            }
            ParamValue::Absent => s.serialize_none(),
        }
    }
}

/// Largest magnitude below which an integral f64 is written as an integer.
const EXACT_INT: f64 = 9_007_199_254_740_992.0; // 2^53

fn serialize_number<S: serde::Serializer>(v: f64, s: S) -> std::result::Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() < EXACT_INT { s.serialize_i64(v as i64) } else { s.serialize_f64(v) }
}

/// A list element, written like a number parameter.
struct Number(f64);

impl Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        serialize_number(self.0, s)
    }
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Number(v) => write!(f, "{v}"),
            ParamValue::Text(s) => write!(f, "{s:?}"),
            ParamValue::List(l) => write!(f, "{l:?}"),
            ParamValue::Absent => write!(f, "absent"),
        }
    }
}

impl ParamSpec {
    /// Whether only world recipes read the parameter (its doc starts with "World recipes
    /// only"): a length in world metres, a world centre, droplets per world cell. A single map
    /// never needs it (the map editor hides it).
    pub fn world_only(&self) -> bool {
        self.doc.starts_with("World recipes only")
    }

    /// Whether the parameter is optional (default [`DefaultValue::Absent`]).
    pub const fn optional(&self) -> bool {
        matches!(self.default, DefaultValue::Absent)
    }

    /// The allowed range in words, for error messages and help.
    pub fn allowed(&self) -> String {
        let range = self.range_words();
        if self.optional() { format!("{range}, or absent (key omitted)") } else { range }
    }

    fn range_words(&self) -> String {
        match self.kind {
            ParamKind::Float { min, max } => format!("a number in [{min}, {max}]"),
            ParamKind::Int { min, max } => format!("an integer in {min}..={max}"),
            ParamKind::Bool => "true or false".into(),
            ParamKind::Choice(c) => format!("one of {}", c.join(", ")),
            ParamKind::List { min, max, min_len, max_len } => {
                format!("a list of {min_len}..={max_len} numbers, each in [{min}, {max}]")
            }
            ParamKind::Text | ParamKind::LegacyText => "a text string".into(),
        }
    }

    /// Checks one value against this spec; the error names the parameter and the allowed range.
    pub fn check(&self, value: &ParamValue) -> Result<()> {
        let bad = || Err(Error::param(self.name, value, self.allowed()));
        match (self.kind, value) {
            (ParamKind::Float { min, max }, ParamValue::Number(v)) => {
                if !(v.is_finite() && *v >= min && *v <= max) {
                    return bad();
                }
            }
            (ParamKind::Int { min, max }, ParamValue::Number(v)) => {
                if !(v.is_finite() && v.fract() == 0.0 && *v >= min as f64 && *v <= max as f64) {
                    return bad();
                }
            }
            (ParamKind::Bool, ParamValue::Bool(_)) => {}
            (ParamKind::Choice(c), ParamValue::Text(s)) => {
                if !c.contains(&s.as_str()) {
                    return bad();
                }
            }
            (ParamKind::List { min, max, min_len, max_len }, ParamValue::List(l)) => {
                if l.len() < min_len
                    || l.len() > max_len
                    || l.iter().any(|v| !(v.is_finite() && *v >= min && *v <= max))
                {
                    return bad();
                }
            }
            (ParamKind::Text | ParamKind::LegacyText, ParamValue::Text(_)) => {}
            (_, ParamValue::Absent) if self.optional() => {}
            _ => return bad(),
        }
        Ok(())
    }
}

/// A step's parameter values, complete (defaults filled in) and validated against its specs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    values: BTreeMap<String, ParamValue>,
}

impl Params {
    /// Validates `given` against `specs`: unknown keys and bad values are collected (one
    /// [`Problem`] each, naming the key, the value and the allowed range); missing keys take
    /// their default.
    pub fn validate(
        specs: &[ParamSpec],
        given: &BTreeMap<String, ParamValue>,
    ) -> std::result::Result<Self, Vec<Problem>> {
        let mut problems = Vec::new();
        for key in given.keys() {
            if !specs.iter().any(|s| s.name == key) {
                let known: Vec<_> = specs.iter().map(|s| s.name).collect();
                problems.push(Problem {
                    field: Some(key.clone()),
                    ..Problem::message(format!("unknown parameter `{key}` (known: {})", known.join(", ")))
                });
            }
        }
        let mut values = BTreeMap::new();
        for spec in specs {
            // An optional parameter's key left out is `ParamValue::Absent`.
            let value = given.get(spec.name).cloned().unwrap_or_else(|| spec.default.to_value());
            // An integer-valued parameter may be written as 3 or 3.0; both are numbers here.
            match spec.check(&value) {
                Ok(()) => {
                    values.insert(spec.name.to_string(), value);
                }
                Err(e) => problems.push(Problem::from_error(e)),
            }
        }
        if problems.is_empty() { Ok(Self { values }) } else { Err(problems) }
    }

    /// Defaults for every spec (always valid if the specs are consistent).
    pub fn defaults(specs: &[ParamSpec]) -> Self {
        Self { values: specs.iter().map(|s| (s.name.to_string(), s.default.to_value())).collect() }
    }

    /// These values with `name` set to `value`, unchecked (tests feed out-of-range values to a
    /// step's own checks this way).
    #[cfg(test)]
    pub(crate) fn with(mut self, name: &str, value: ParamValue) -> Self {
        self.values.insert(name.to_string(), value);
        self
    }

    /// All values.
    pub fn values(&self) -> &BTreeMap<String, ParamValue> {
        &self.values
    }

    fn missing(name: &str) -> Error {
        Error::param(name, "(missing)", "a parameter declared in the step's ParamSpec list")
    }

    /// A number parameter.
    pub fn f64(&self, name: &str) -> Result<f64> {
        match self.values.get(name) {
            Some(ParamValue::Number(v)) => Ok(*v),
            _ => Err(Self::missing(name)),
        }
    }
    /// An optional number parameter: `None` when absent.
    pub fn opt_f64(&self, name: &str) -> Result<Option<f64>> {
        match self.values.get(name) {
            Some(ParamValue::Absent) => Ok(None),
            _ => self.f64(name).map(Some),
        }
    }
    /// A number parameter as f32.
    pub fn f32(&self, name: &str) -> Result<f32> {
        self.f64(name).map(|v| v as f32)
    }
    /// An integer parameter (validated as integral).
    pub fn i64(&self, name: &str) -> Result<i64> {
        self.f64(name).map(|v| v as i64)
    }
    /// A non-negative integer parameter; a negative or fractional value is an error (never
    /// clamped).
    pub fn usize(&self, name: &str) -> Result<usize> {
        let v = self.f64(name)?;
        if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= usize::MAX as f64 {
            Ok(v as usize)
        } else {
            Err(Error::param(name, v, "a non-negative integer"))
        }
    }
    /// A boolean parameter.
    pub fn bool(&self, name: &str) -> Result<bool> {
        match self.values.get(name) {
            Some(ParamValue::Bool(b)) => Ok(*b),
            _ => Err(Self::missing(name)),
        }
    }
    /// A choice or text parameter.
    pub fn text(&self, name: &str) -> Result<&str> {
        match self.values.get(name) {
            Some(ParamValue::Text(s)) => Ok(s),
            _ => Err(Self::missing(name)),
        }
    }
    /// A list parameter.
    pub fn list(&self, name: &str) -> Result<&[f64]> {
        match self.values.get(name) {
            Some(ParamValue::List(l)) => Ok(l),
            _ => Err(Self::missing(name)),
        }
    }
}

/// A type a step parameter can have: how it is read from validated [`Params`] and written back
/// as a [`ParamValue`] (for the range check of a value built through the library API).
/// [`step_params!`] uses it for every field.
pub trait ParamField: Sized {
    /// The value of parameter `name` in `p`.
    fn read(p: &Params, name: &str) -> Result<Self>;
    /// As a recipe value.
    fn to_value(&self) -> ParamValue;
}

impl ParamField for f64 {
    fn read(p: &Params, name: &str) -> Result<Self> {
        p.f64(name)
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Number(*self)
    }
}

impl ParamField for f32 {
    fn read(p: &Params, name: &str) -> Result<Self> {
        p.f32(name)
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Number(*self as f64)
    }
}

impl ParamField for bool {
    fn read(p: &Params, name: &str) -> Result<Self> {
        p.bool(name)
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Bool(*self)
    }
}

impl ParamField for Vec<f64> {
    fn read(p: &Params, name: &str) -> Result<Self> {
        p.list(name).map(<[f64]>::to_vec)
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::List(self.clone())
    }
}

impl ParamField for String {
    fn read(p: &Params, name: &str) -> Result<Self> {
        p.text(name).map(str::to_string)
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Text(self.clone())
    }
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl ParamField for $t {
            fn read(p: &Params, name: &str) -> Result<Self> {
                let v = p.f64(name)?;
                if v.fract() == 0.0 && v >= <$t>::MIN as f64 && v <= <$t>::MAX as f64 {
                    Ok(v as $t)
                } else {
                    Err(Error::param(name, v, concat!("an integer that fits ", stringify!($t))))
                }
            }
            fn to_value(&self) -> ParamValue {
                ParamValue::Number(*self as f64)
            }
        }
    )*};
}
int_field!(u32, u64, usize, i32, i64);

/// An optional number (a spec with [`DefaultValue::Absent`]): `None` is the key left out.
impl ParamField for Option<f64> {
    fn read(p: &Params, name: &str) -> Result<Self> {
        p.opt_f64(name)
    }
    fn to_value(&self) -> ParamValue {
        self.map_or(ParamValue::Absent, ParamValue::Number)
    }
}

/// The recipe value that means "none" for an optional seed ([`ParamField`] for `Option<u64>`).
pub const NO_SEED: i64 = -1;

/// An optional seed: `None` ("use the step's seed") is written [`NO_SEED`] (`-1`) in a recipe,
/// since TOML has no null; `Some(n)` is `n`. Its spec is an [`ParamKind::Int`] whose `min` is
/// `-1` (any other negative value is refused by the range check, naming the range).
impl ParamField for Option<u64> {
    fn read(p: &Params, name: &str) -> Result<Self> {
        let v = p.f64(name)?;
        if v == NO_SEED as f64 {
            Ok(None)
        } else if v.fract() == 0.0 && v >= 0.0 && v <= u64::MAX as f64 {
            Ok(Some(v as u64))
        } else {
            Err(Error::param(name, v, format!("{NO_SEED} (the step's seed) or a seed >= 0")))
        }
    }
    fn to_value(&self) -> ParamValue {
        ParamValue::Number(self.map_or(NO_SEED as f64, |n| n as f64))
    }
}

/// A choice parameter's enum: its recipe names come from one list, in declaration order
/// ([`choice_enum!`] writes this impl, the serde renames and the [`ParamField`] impl).
pub trait Choice: Sized + Copy + 'static {
    /// Every name, in declaration order (a [`ParamKind::Choice`] list).
    const NAMES: &'static [&'static str];
    /// Every variant, in the order of [`Choice::NAMES`].
    const ALL: &'static [Self];
    /// The variant called `name`.
    fn from_name(name: &str) -> Option<Self>;
    /// This variant's recipe name.
    fn name(self) -> &'static str;
}

/// Declares a choice enum from one list `Variant = "recipe-name"`: the enum (with serde renames),
/// its [`Choice`] impl (`NAMES`, `ALL`, `from_name`, `name`) and its [`ParamField`] impl.
///
/// ```ignore
/// choice_enum! {
///     /// How lattice values are blended.
///     pub enum Interpolation { /// Straight lines.
///         Linear = "linear", /// Cosine ease.
///         Cosine = "cosine" }
/// }
/// ```
macro_rules! choice_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $key:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        $vis enum $name {
            $( $(#[$vmeta])* #[serde(rename = $key)] $variant, )+
        }

        impl $crate::step::params::Choice for $name {
            const NAMES: &'static [&'static str] = &[$($key),+];
            const ALL: &'static [Self] = &[$(Self::$variant),+];
            fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $key => Some(Self::$variant), )+
                    _ => None,
                }
            }
            fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => $key, )+
                }
            }
        }

        impl $crate::step::params::ParamField for $name {
            fn read(p: &$crate::step::Params, name: &str) -> $crate::Result<Self> {
                let text = p.text(name)?;
                <Self as $crate::step::params::Choice>::from_name(text).ok_or_else(|| {
                    $crate::Error::param(
                        name,
                        format!("{text:?}"),
                        format!("one of {}", <Self as $crate::step::params::Choice>::NAMES.join(", ")),
                    )
                })
            }
            fn to_value(&self) -> $crate::step::ParamValue {
                $crate::step::ParamValue::Text(
                    <Self as $crate::step::params::Choice>::name(*self).to_string(),
                )
            }
        }
    };
}
pub(crate) use choice_enum;

/// Declares a step's parameters once. Each field is written as `field: Type = ParamSpec {..}`,
/// or `field: Type = shared(OTHER_SPECS, "key")` for a parameter another step declares (the
/// same key, range, default and doc, taken by name with [`spec_named`]; document the field with
/// a `///` line), or `field: Type = nested` for a field whose type is itself declared with
/// `step_params!` (all of that type's parameters, in its order, read and checked by it; the
/// form `nested("key" => DefaultValue::..)` changes some of their defaults), and the macro
/// generates:
/// - the struct, with public fields documented by the spec's `doc` (plus its recipe key);
/// - `PARAMS`, the [`ParamSpec`] list in field order (what the registry, `terrasynth steps`,
///   the editor's widgets, recipe validation and docs/RECIPES.md read);
/// - `check_ranges(&self)`, which checks every field against its spec (library constructors
///   call it, so `new` and recipes refuse exactly the same values);
/// - `read_params(&Params)`, every field read from validated params by name, then checked;
/// - `Default`, every field at its spec's default.
///
/// Extra attributes before the struct (docs, derives) are kept; cross-field rules stay in the
/// type's own `new`.
macro_rules! step_params {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident { $($body:tt)* }
    ) => {
        $crate::step::params::step_params!(@field [$(#[$meta])*] $vis $name [] $($body)*);
    };
    // A field declared here.
    (
        @field $m:tt $vis:vis $name:ident [$($done:tt)*]
        $(#[$fmeta:meta])*
        $field:ident : $ty:ty = ParamSpec {
            name: $key:literal,
            label: $label:expr,
            kind: $kind:expr,
            default: $default:expr,
            unit: $unit:expr,
            doc: $doc:expr $(,)?
        }
        $(, $($rest:tt)*)?
    ) => {
        $crate::step::params::step_params!(
            @field $m $vis $name
            [$($done)* {
                [#[doc = $doc] #[doc = ""] $(#[$fmeta])* #[doc = ""]
                 #[doc = concat!("Recipe key `", $key, "`; range and default in [`", stringify!($name), "::PARAMS`].")]]
                $field [$ty] (one $key)
                (&[$crate::step::ParamSpec { name: $key, label: $label, kind: $kind, default: $default, unit: $unit, doc: $doc }])
            }]
            $($($rest)*)?
        );
    };
    // A field declared by another step, taken by name.
    (
        @field $m:tt $vis:vis $name:ident [$($done:tt)*]
        $(#[$fmeta:meta])*
        $field:ident : $ty:ty = shared($specs:expr, $key:literal)
        $(, $($rest:tt)*)?
    ) => {
        $crate::step::params::step_params!(
            @field $m $vis $name
            [$($done)* {
                [$(#[$fmeta])* #[doc = ""]
                 #[doc = concat!("Recipe key `", $key, "`; range and default in [`", stringify!($name), "::PARAMS`].")]]
                $field [$ty] (one $key)
                (&[$crate::step::params::spec_named($specs, $key)])
            }]
            $($($rest)*)?
        );
    };
    // A field whose type is itself declared with `step_params!`: all its parameters, in its
    // order, are this step's too (read, checked and defaulted by that type).
    (
        @field $m:tt $vis:vis $name:ident [$($done:tt)*]
        $(#[$fmeta:meta])*
        $field:ident : $ty:ty = nested $(( $($okey:literal => $oval:expr),+ $(,)? ))?
        $(, $($rest:tt)*)?
    ) => {
        $crate::step::params::step_params!(
            @field $m $vis $name
            [$($done)* {
                [$(#[$fmeta])* #[doc = ""]
                 #[doc = concat!("Its recipe keys are [`", stringify!($ty), "::PARAMS`], listed in [`", stringify!($name), "::PARAMS`].")]]
                $field [$ty] (nested)
                (&$crate::step::params::with_defaults::<{ <$ty>::PARAMS.len() }>(
                    <$ty>::PARAMS,
                    &[$($( ($okey, $oval) ),+)?],
                ))
            }]
            $($($rest)*)?
        );
    };
    // One field checked / read.
    (@check $self:ident $field:ident (one $key:literal)) => {
        $crate::step::params::check_field(
            Self::PARAMS,
            $key,
            &$crate::step::params::ParamField::to_value(&$self.$field),
        )?
    };
    (@check $self:ident $field:ident (nested)) => { $self.$field.check_ranges()? };
    (@read $p:ident $ty:ty, (one $key:literal)) => {
        $crate::step::params::ParamField::read($p, $key)?
    };
    (@read $p:ident $ty:ty, (nested)) => { <$ty>::read_params($p)? };
    // Every field read: generate.
    (
        @field [$(#[$meta:meta])*] $vis:vis $name:ident
        [$({ [$($fattr:tt)*] $field:ident [$ty:ty] $how:tt ($specs:expr) })+]
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $($fattr)*
                pub $field: $ty,
            )+
        }

        impl $name {
            /// Parameter specs (recipe keys), one per field (a nested field's own list), in field
            /// order.
            pub const PARAMS: &'static [$crate::step::ParamSpec] =
                &$crate::step::params::concat_specs::<{ 0 $( + $specs.len() )+ }>(&[$( $specs ),+]);

            /// Checks every field against its spec in `PARAMS`; the error names the recipe key
            /// and the allowed range.
            pub fn check_ranges(&self) -> $crate::Result<()> {
                $( $crate::step::params::step_params!(@check self $field $how); )+
                Ok(())
            }

            /// Every field from validated recipe parameters, checked with `check_ranges`.
            pub fn read_params(p: &$crate::step::Params) -> $crate::Result<Self> {
                let s = Self { $( $field: $crate::step::params::step_params!(@read p $ty, $how), )+ };
                s.check_ranges()?;
                Ok(s)
            }
        }

        impl Default for $name {
            /// Every field at its spec's default.
            fn default() -> Self {
                let p = $crate::step::Params::defaults(Self::PARAMS);
                Self::read_params(&p).expect("bug: a ParamSpec default is outside its own range")
            }
        }
    };
}
pub(crate) use step_params;

/// The `N` specs of `parts`, in order, usable in a `const` ([`step_params!`] builds `PARAMS`
/// from its fields' lists; a wrong `N` fails the build).
pub const fn concat_specs<const N: usize>(parts: &[&[ParamSpec]]) -> [ParamSpec; N] {
    const BLANK: ParamSpec = ParamSpec {
        name: "",
        label: "",
        kind: ParamKind::Bool,
        default: DefaultValue::Bool(false),
        unit: "",
        doc: "",
    };
    let mut out = [BLANK; N];
    let (mut i, mut k) = (0, 0);
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[k] = parts[i][j];
            (j, k) = (j + 1, k + 1);
        }
        i += 1;
    }
    assert!(k == N, "concat_specs: N is not the total length");
    out
}

/// `specs` (exactly `N` of them) with the defaults of the named ones replaced, usable in a
/// `const` (a nested [`step_params!`] field with its own defaults). A missing name fails the
/// build.
pub const fn with_defaults<const N: usize>(
    specs: &[ParamSpec],
    defaults: &[(&str, DefaultValue)],
) -> [ParamSpec; N] {
    let mut out = concat_specs::<N>(&[specs]);
    let mut i = 0;
    while i < defaults.len() {
        let mut j = 0;
        while !str_eq(out[j].name, defaults[i].0) {
            j += 1;
            assert!(j < N, "with_defaults: no ParamSpec with this name");
        }
        out[j].default = defaults[i].1;
        i += 1;
    }
    out
}

/// The spec called `name` in `specs`, usable in a `const` (a step that shares another step's
/// parameters lists them by name, never by position). A missing name fails the build.
pub const fn spec_named(specs: &[ParamSpec], name: &str) -> ParamSpec {
    let mut i = 0;
    while i < specs.len() {
        if str_eq(specs[i].name, name) {
            return specs[i];
        }
        i += 1;
    }
    panic!("no ParamSpec with this name")
}

/// `a == b` in a `const fn`.
pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Checks `value` against the spec called `name` in `specs`.
/// Checks that each named list holds x, y pairs (an even number of values), naming the first
/// list that does not.
pub(crate) fn check_pairs(lists: &[(&str, &[f64])]) -> Result<()> {
    for &(name, list) in lists {
        if !list.len().is_multiple_of(2) {
            return Err(Error::param(name, format!("{list:?}"), "an even number of values (x, y pairs)"));
        }
    }
    Ok(())
}

pub(crate) fn check_field(specs: &[ParamSpec], name: &str, value: &ParamValue) -> Result<()> {
    spec_named(specs, name).check(value)
}

/// Checks the number `value` against the spec called `name` in `specs`, so that the library
/// API (`Type::new`) and recipe validation share one definition of every range.
pub(crate) fn check_number(specs: &[ParamSpec], name: &str, value: f64) -> Result<()> {
    spec_named(specs, name).check(&ParamValue::Number(value))
}

/// Test helper: for every number spec in `specs`, `build(name, v)` (a constructor call with
/// parameter `name` set to `v`, the others at their defaults) accepts both ends of the range and
/// refuses a value just outside either end with an [`Error::InvalidParameter`] naming `name`.
/// "Just outside" is one part in 10^6 of the bound (at least 10^-6), which survives a cast to
/// f32, or 1 for an integer. Returns how many specs were checked, so a caller can assert none was
/// skipped.
#[cfg(test)]
pub(crate) fn assert_ranges_enforced(specs: &[ParamSpec], build: &dyn Fn(&str, f64) -> Result<()>) -> usize {
    let mut checked = 0;
    for spec in specs {
        let Some((min, max, below, above)) = just_outside(spec) else { continue };
        for v in [min, max] {
            if let Err(e) = build(spec.name, v) {
                panic!("{} = {v} (a bound of its spec) refused: {e}", spec.name);
            }
        }
        for v in [below, above] {
            match build(spec.name, v) {
                Err(Error::InvalidParameter { name, .. }) if name == spec.name => {}
                other => panic!("{} = {v} (outside {}): {other:?}", spec.name, spec.allowed()),
            }
        }
        checked += 1;
    }
    checked
}

/// Test helper: `(min, max, below, above)` of a number spec, `below`/`above` being the values
/// "just outside" its range that [`assert_ranges_enforced`] tries (None for other kinds).
#[cfg(test)]
pub(crate) fn just_outside(spec: &ParamSpec) -> Option<(f64, f64, f64, f64)> {
    match spec.kind {
        ParamKind::Float { min, max } => {
            let step = |v: f64| 1e-6 * v.abs().max(1.0);
            Some((min, max, min - step(min), max + step(max)))
        }
        ParamKind::Int { min, max } => Some((min as f64, max as f64, min as f64 - 1.0, max as f64 + 1.0)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "roughness",
            label: "Roughness",
            kind: ParamKind::Float { min: 0.0, max: 4.0 },
            default: DefaultValue::Number(1.0),
            unit: "",
            doc: "test",
        },
        ParamSpec {
            name: "octaves",
            label: "Octaves",
            kind: ParamKind::Int { min: 1, max: 32 },
            default: DefaultValue::Number(6.0),
            unit: "",
            doc: "test",
        },
        ParamSpec {
            name: "mode",
            label: "Mode",
            kind: ParamKind::Choice(&["a", "b"]),
            default: DefaultValue::Text("a"),
            unit: "",
            doc: "test",
        },
    ];

    #[test]
    fn defaults_fill_missing_keys() {
        let p = Params::validate(SPECS, &BTreeMap::new()).unwrap();
        assert_eq!(p.f64("roughness").unwrap(), 1.0);
        assert_eq!(p.usize("octaves").unwrap(), 6);
        assert_eq!(p.text("mode").unwrap(), "a");
    }

    /// An optional number: absent when its key is left out, checked against exactly its range
    /// when given (no sentinel inside or below it), and written back by omitting the key.
    #[test]
    fn optional_number_is_absent_or_in_range() {
        let spec = ParamSpec {
            name: "gain",
            label: "Musgrave gain",
            kind: ParamKind::Float { min: 0.0, max: 2.0 },
            default: DefaultValue::Absent,
            unit: "",
            doc: "test",
        };
        assert!(spec.optional());
        let specs = [spec];
        let p = Params::validate(&specs, &BTreeMap::new()).unwrap();
        assert_eq!(p.opt_f64("gain").unwrap(), None);
        assert!(p.f64("gain").is_err(), "an absent value is no number");
        for (v, ok) in [(0.0, true), (2.0, true), (-1e-9, false), (-1.0, false), (2.000001, false)] {
            let given = [("gain".to_string(), ParamValue::Number(v))].into_iter().collect();
            match Params::validate(&specs, &given) {
                Ok(p) => assert!(ok && p.opt_f64("gain").unwrap() == Some(v), "{v}"),
                Err(e) => {
                    assert!(!ok, "{v}: {e:?}");
                    assert!(e[0].to_string().contains("[0, 2], or absent (key omitted)"), "{e:?}");
                }
            }
        }
        // A required spec refuses `Absent`.
        assert!(SPECS[0].check(&ParamValue::Absent).is_err());
        // TOML omits the key; JSON writes null.
        let table: BTreeMap<_, _> =
            [("a", ParamValue::Absent), ("b", ParamValue::Number(1.0))].into_iter().collect();
        assert_eq!(toml::to_string(&table).unwrap().trim(), "b = 1");
        let json = serde_json::to_string(&table).unwrap();
        assert_eq!(json, r#"{"a":null,"b":1}"#);
        // A report's JSON recipe reads back: null is absent again.
        assert_eq!(serde_json::from_str::<BTreeMap<&str, ParamValue>>(&json).unwrap(), table);
    }

    #[test]
    fn every_problem_is_reported_with_range() {
        let mut given = BTreeMap::new();
        given.insert("roughness".into(), ParamValue::Number(f64::NAN));
        given.insert("octaves".into(), ParamValue::Number(2.5));
        given.insert("mode".into(), ParamValue::Text("z".into()));
        given.insert("colour".into(), ParamValue::Bool(true));
        let problems: Vec<String> =
            Params::validate(SPECS, &given).unwrap_err().iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("`roughness`") && p.contains("[0, 4]")));
        assert!(problems.iter().any(|p| p.contains("`octaves`") && p.contains("1..=32")));
        assert!(problems.iter().any(|p| p.contains("`mode`") && p.contains("one of a, b")));
        assert!(problems.iter().any(|p| p.contains("unknown parameter `colour`")));
    }
}
