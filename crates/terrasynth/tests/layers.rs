//! The library's modules import downward only: every `crate::…` path under `src/` must point to
//! a module in the same or a lower layer of the table in `docs/ARCHITECTURE.md` (between the
//! `layers:begin` and `layers:end` markers), so the page and the code cannot disagree.
//!
//! What is read: every `crate::x` path in code (`use` lines, `crate::x::f()` calls, paths in
//! types), including `use crate::{a::…, b::…}` groups; comments are skipped (an intra-doc
//! link is not a dependency). The crate root's re-exports (`crate::Heightmap`, `crate::Error`,
//! …) count as the module they come from; `crate::noise` (the noise crate) is below them all.
//! `super::` paths are not followed: in this crate none climbs out of its top-level module
//! (`super::super` appears only inside `mod tests`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Known violations, each with the reason it is still there. Each entry must still occur (the
/// test fails once it is fixed, so the entry gets removed); add none without a reason.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    // (file under src/, target module, why) — none left.
];

/// The crate root's re-exports and the module each one comes from.
const ROOT_REEXPORTS: &[(&str, &str)] = &[
    ("Error", "error"),
    ("Result", "error"),
    ("Problem", "error"),
    ("join_problems", "error"),
    ("Grid", "grid"),
    ("Heightmap", "grid"),
    ("Progress", "progress"),
    ("Pipeline", "recipe"),
    ("Recipe", "recipe"),
];

/// `crate::noise` is the noise crate (`terrasynth_noise`), below every module.
const BELOW_EVERY_MODULE: &str = "noise";

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Module name → layer number (1 = bottom), from the table in docs/ARCHITECTURE.md: rows
/// `| n | `a`, `b` | … |` between `<!-- layers:begin -->` and `<!-- layers:end -->`.
fn layer_table() -> BTreeMap<String, usize> {
    let page = manifest().join("../../docs/ARCHITECTURE.md");
    let text = fs::read_to_string(&page).expect("docs/ARCHITECTURE.md");
    let start = text.find("<!-- layers:begin -->").expect("layers:begin marker in ARCHITECTURE.md");
    let end = text.find("<!-- layers:end -->").expect("layers:end marker in ARCHITECTURE.md");
    let mut table = BTreeMap::new();
    for line in text[start..end].lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(layer) = cells.get(1).and_then(|c| c.parse::<usize>().ok()) else { continue };
        for name in cells[2].split(',') {
            let name = name.trim().trim_matches('`').trim_end_matches('/');
            let name = name.strip_suffix(".rs").unwrap_or(name);
            assert!(!name.is_empty(), "empty module name in layer row {layer}");
            assert!(table.insert(name.to_string(), layer).is_none(), "`{name}` is in two layer rows");
        }
    }
    assert!(table.len() >= 10, "layer table not found or too short: {table:?}");
    table
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source without comments (`//…` to the end of the line, `/* … */`), strings kept.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let b = src.as_bytes();
    let (mut i, mut in_str) = (0, false);
    while i < b.len() {
        if in_str {
            if b[i] == b'\\' {
                out.push_str(&src[i..i + 2]);
                i += 2;
                continue;
            }
            in_str = b[i] != b'"';
        } else if b[i] == b'"' && (i == 0 || !matches!(b[i - 1], b'\'' | b'\\')) {
            in_str = true;
        } else if src[i..].starts_with("//") {
            i = src[i..].find('\n').map_or(b.len(), |n| i + n);
            continue;
        } else if src[i..].starts_with("/*") {
            i = src[i..].find("*/").map_or(b.len(), |n| i + n + 2);
            continue;
        }
        let ch = src[i..].chars().next().expect("char");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The first segment of every `crate::` path in `code` (each item of a `crate::{…}` group).
fn crate_targets(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        // `$crate::` and `other_crate::` are not paths into this crate's root.
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut item_start, mut items) = (0usize, 0usize, Vec::new());
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        items.push(&group[item_start..k]);
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&group[item_start..k]);
                        item_start = k + 1;
                    }
                    _ => {}
                }
            }
            out.extend(items.iter().map(|s| ident(s.trim())).filter(|s| !s.is_empty()).map(String::from));
        } else {
            out.push(ident(rest).to_string());
        }
    }
    out
}

/// Top-level module of a file under `src/` (`hydro/fill.rs` → `hydro`, `memory.rs` → `memory`).
fn top_module(rel: &Path) -> String {
    let first = rel.components().next().expect("path").as_os_str().to_string_lossy().into_owned();
    first.strip_suffix(".rs").unwrap_or(&first).to_string()
}

#[test]
fn modules_import_only_their_own_or_lower_layers() {
    let table = layer_table();
    let reexports: BTreeMap<&str, &str> = ROOT_REEXPORTS.iter().copied().collect();
    let src = manifest().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();

    let mut violations = Vec::new();
    let mut unplaced = Vec::new();
    let mut seen_exceptions = vec![false; EXCEPTIONS.len()];
    for path in &files {
        let rel = path.strip_prefix(&src).expect("under src/");
        let rel_str = rel.to_string_lossy().replace('\\', "/");
        if rel_str == "lib.rs" {
            continue;
        }
        let from = top_module(rel);
        let Some(&from_layer) = table.get(&from) else {
            unplaced.push(format!("src/{rel_str}: module `{from}`"));
            continue;
        };
        let code = strip_comments(&fs::read_to_string(path).expect("read source"));
        for target in crate_targets(&code) {
            if target == BELOW_EVERY_MODULE {
                continue;
            }
            let module = reexports.get(target.as_str()).copied().unwrap_or(&target);
            let Some(&to_layer) = table.get(module) else {
                unplaced.push(format!("src/{rel_str}: `crate::{target}`"));
                continue;
            };
            if to_layer <= from_layer {
                continue;
            }
            match EXCEPTIONS.iter().position(|&(f, m, _)| f == rel_str && m == module) {
                Some(k) => seen_exceptions[k] = true,
                None => violations.push(format!(
                    "src/{rel_str} (`{from}`, layer {from_layer}) uses `crate::{target}` (`{module}`, layer {to_layer})"
                )),
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(
        unplaced.is_empty(),
        "modules missing from the layer table in docs/ARCHITECTURE.md:\n{}",
        unplaced.join("\n")
    );
    assert!(
        violations.is_empty(),
        "upward imports (move the code down instead, see docs/ARCHITECTURE.md):\n{}",
        violations.join("\n")
    );
    let stale: Vec<_> = EXCEPTIONS.iter().zip(&seen_exceptions).filter(|(_, seen)| !**seen).collect();
    assert!(stale.is_empty(), "exceptions that no longer occur, remove them from EXCEPTIONS: {stale:?}");
}

#[test]
fn every_library_module_is_in_the_layer_table() {
    let table = layer_table();
    let lib = fs::read_to_string(manifest().join("src/lib.rs")).expect("lib.rs");
    let code = strip_comments(&lib);
    for line in code.lines() {
        let line = line.trim();
        let Some(name) = line.strip_prefix("pub mod ").or_else(|| line.strip_prefix("mod ")) else {
            continue;
        };
        let name = ident(name);
        assert!(
            table.contains_key(name),
            "`{name}` (lib.rs) has no row in the layer table of docs/ARCHITECTURE.md"
        );
    }
}

#[test]
fn the_reader_finds_paths_groups_and_skips_comments() {
    let code = strip_comments(
        "use crate::grid::D8; // crate::recipe\nuse crate::{Error, step::{Step, Terrain}, hydro::D8Router};\n\
         /* crate::io */ let s = \"//\"; let x = crate::render::mesh::f(); pub(crate) use foo;",
    );
    assert_eq!(crate_targets(&code), ["grid", "Error", "step", "hydro", "render"]);
}
