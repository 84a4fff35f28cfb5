//! The registry: every step type a recipe can name, gathered from each stage's
//! `steps()` function (generate, shape, erode, hydro, io). Names are fixed by the step
//! contract (kebab-case; see docs/RECIPES.md) and unique.

use crate::step::StepInfo;

/// Every registered step, in stage order (generators first).
pub fn registry() -> Vec<StepInfo> {
    let mut all = Vec::new();
    all.extend(crate::generate::steps());
    all.extend(crate::shape::steps());
    all.extend(crate::erode::steps());
    all.extend(crate::hydro::steps());
    all.extend(crate::io::steps());
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case_and_documented() {
        let reg = registry();
        let mut names: Vec<_> = reg.iter().map(|s| s.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate step names");
        for s in &reg {
            assert!(
                s.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{} is not kebab-case",
                s.name
            );
            assert!(!s.doc.is_empty() && !s.source.is_empty(), "{} lacks doc/source", s.name);
            for p in s.params {
                assert!(!p.doc.is_empty(), "{}.{} lacks a doc", s.name, p.name);
                assert!(p.check(&p.default.to_value()).is_ok(), "{}.{} default invalid", s.name, p.name);
            }
        }
    }
}
