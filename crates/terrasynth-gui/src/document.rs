//! The editor's document: a recipe plus an ordered list of edits, and the versioned project
//! file that stores it. Both live in the library, [`terrasynth::recipe::project`], so that
//! `terrasynth generate --project` builds the same terrain the editor exports; this module
//! re-exports them under the editor's names.

pub use terrasynth::recipe::project::*;
