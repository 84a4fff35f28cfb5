//! `rivers.geojson` (RFC 7946) from the hydrology layers, and the pretty JSON writer the
//! outputs share (report.json too).

use std::path::Path;

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use super::atomic;
use crate::hydro::{River, RiverPoint, strahler_orders};
use crate::{Error, Result};

/// `rivers.geojson`: a FeatureCollection with one LineString per river, upstream first.
/// Coordinates are local world metres `[x, y, z]`: `x = column · cell size`,
/// `y = row · cell size` (rows go south, as in the heightmaps), `z` = the water surface
/// (filled surface) height in metres. Properties: `id`, `order` (Strahler order of the river
/// above its last vertex, which is the junction with the river it joins or its outlet),
/// `discharge_cells` and `drainage_area_m2` at that point, `max_width_m`, `length_m`, and
/// `grid`, the polyline in grid coordinates (column, row).
pub fn rivers_geojson(rivers: &[River], cell_size_m: f64, height_scale_m: f64) -> Value {
    // Through the streamed document: one definition of the file.
    serde_json::to_value(RiversGeojson::new(rivers, cell_size_m, height_scale_m))
        .expect("a document of numbers and strings is valid JSON")
}

/// The document of [`rivers_geojson`], serialized as it goes instead of built as a JSON tree
/// first (at 1025² the tree's allocations were most of the file's time): objects with their
/// keys in sorted order, as a [`Value`]'s are, so [`write_json_sorted`] writes the same bytes
/// as [`write_json`] of [`rivers_geojson`] (test `streamed_rivers_geojson_equals_the_tree`).
pub struct RiversGeojson<'a> {
    rivers: &'a [River],
    orders: Vec<Vec<u32>>,
    cell_size_m: f64,
    height_scale_m: f64,
}

impl<'a> RiversGeojson<'a> {
    /// The document of `rivers` (see [`rivers_geojson`]).
    pub fn new(rivers: &'a [River], cell_size_m: f64, height_scale_m: f64) -> Self {
        Self { rivers, orders: strahler_orders(rivers), cell_size_m, height_scale_m }
    }
}

impl Serialize for RiversGeojson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(4))?;
        map.serialize_entry("cell_size_m", &self.cell_size_m)?;
        map.serialize_entry("features", &Features(self))?;
        map.serialize_entry("name", "rivers")?;
        map.serialize_entry("type", "FeatureCollection")?;
        map.end()
    }
}

/// The features of a [`RiversGeojson`], one per river.
struct Features<'a>(&'a RiversGeojson<'a>);

impl Serialize for Features<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let doc = self.0;
        let mut seq = s.serialize_seq(Some(doc.rivers.len()))?;
        for (id, (river, orders)) in doc.rivers.iter().zip(&doc.orders).enumerate() {
            seq.serialize_element(&Feature { doc, id, river, orders })?;
        }
        seq.end()
    }
}

/// One river's feature.
struct Feature<'a> {
    doc: &'a RiversGeojson<'a>,
    id: usize,
    river: &'a River,
    orders: &'a [u32],
}

impl Serialize for Feature<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("geometry", &Geometry(self))?;
        map.serialize_entry("properties", &Properties(self))?;
        map.serialize_entry("type", "Feature")?;
        map.end()
    }
}

/// A feature's LineString.
struct Geometry<'a>(&'a Feature<'a>);

impl Serialize for Geometry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let (cell, scale) = (self.0.doc.cell_size_m, self.0.doc.height_scale_m);
        let points = &self.0.river.points;
        let coords =
            Points(points, |p: &RiverPoint| [p.x as f64 * cell, p.y as f64 * cell, p.height as f64 * scale]);
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("coordinates", &coords)?;
        map.serialize_entry("type", "LineString")?;
        map.end()
    }
}

/// A polyline as an array of arrays of numbers, `f` giving each point's (a Rust array is a
/// JSON array, as a `Vec` is).
struct Points<'a, F>(&'a [RiverPoint], F);

impl<T: Serialize, F: Fn(&RiverPoint) -> T> Serialize for Points<'_, F> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for p in self.0 {
            seq.serialize_element(&(self.1)(p))?;
        }
        seq.end()
    }
}

/// A feature's properties (see [`rivers_geojson`]).
struct Properties<'a>(&'a Feature<'a>);

impl Serialize for Properties<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let Feature { doc, id, river, orders } = self.0;
        let cell = doc.cell_size_m;
        let points = &river.points;
        let own = points.len().saturating_sub(2);
        let length: f64 = points
            .windows(2)
            .map(|s| {
                // √(dx² + dy²) of f32 steps: exact squares in f64, one rounding (no libm).
                let (dx, dy) = ((s[1].x - s[0].x) as f64, (s[1].y - s[0].y) as f64);
                (dx * dx + dy * dy).sqrt()
            })
            .sum::<f64>()
            * cell;
        let q = points.get(own).map_or(0.0, |p| p.discharge as f64);
        let width = points.iter().map(|p| p.width).fold(0.0f32, f32::max) as f64;
        let grid = Points(points, |p: &RiverPoint| [p.x as f64, p.y as f64]);
        let mut map = s.serialize_map(Some(7))?;
        map.serialize_entry("discharge_cells", &q)?;
        map.serialize_entry("drainage_area_m2", &(q * cell * cell))?;
        map.serialize_entry("grid", &grid)?;
        map.serialize_entry("id", id)?;
        map.serialize_entry("length_m", &length)?;
        map.serialize_entry("max_width_m", &(width.max(1.0) * cell))?;
        map.serialize_entry("order", &orders.get(own).copied().unwrap_or(1))?;
        map.end()
    }
}

/// Writes `value`, whose objects already have their keys in sorted order, as
/// [`write_json`] would: pretty JSON with a final newline, atomically, streamed, without the
/// JSON tree in between.
pub fn write_json_sorted(path: &Path, value: &impl Serialize) -> Result<()> {
    let json_err = |e: serde_json::Error| Error::Io { path: path.to_path_buf(), source: e.into() };
    atomic::write_atomic(path, |w| {
        serde_json::to_writer_pretty(&mut *w, value).map_err(json_err)?;
        w.write_all(b"\n").map_err(|e| Error::Io { path: path.to_path_buf(), source: e })
    })
}

/// Writes `value` as pretty JSON with a final newline, atomically and streamed (no text copy
/// in memory). Objects are written with their keys sorted: `value` goes through a
/// `serde_json::Value`, whose maps are ordered by key, then [`write_json_sorted`].
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let value =
        serde_json::to_value(value).map_err(|e| Error::Io { path: path.to_path_buf(), source: e.into() })?;
    write_json_sorted(path, &value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The streamed file is byte for byte the pretty print of the JSON tree with sorted keys,
    /// on rivers with fractional, huge and non-finite numbers, one-point and empty rivers.
    #[test]
    fn streamed_rivers_geojson_equals_the_tree() {
        let pt = |x: f32, y: f32, height: f32, discharge: f32, width: f32| RiverPoint {
            x,
            y,
            height,
            discharge,
            width,
        };
        let rivers = vec![
            River {
                points: vec![
                    pt(0.0, 0.0, 0.1, 1.0, 0.5),
                    pt(1.0, 0.5, 0.05, 3.0, 1.25),
                    pt(2.0, 1.0, 0.0, 7.5, 2.0),
                ],
            },
            River { points: vec![pt(5.0, 5.0, 1e30, 2.0, 0.3), pt(2.0, 1.0, f32::NAN, 9.0, 1.0)] },
            River { points: vec![pt(3.25, 4.0, -0.0, 0.0, 0.0)] },
            River { points: vec![] },
        ];
        let dir = std::env::temp_dir().join(format!("terrasynth-geojson-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (tree, streamed) = (dir.join("tree.geojson"), dir.join("streamed.geojson"));
        write_json(&tree, &rivers_geojson(&rivers, 10.0, 250.0)).unwrap();
        write_json_sorted(&streamed, &RiversGeojson::new(&rivers, 10.0, 250.0)).unwrap();
        let (a, b) = (std::fs::read(&tree).unwrap(), std::fs::read(&streamed).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(a.len() > 500, "a real document");
        assert_eq!(String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
    }
}
