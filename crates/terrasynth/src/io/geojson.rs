//! `rivers.geojson` (RFC 7946) from the hydrology layers, and the pretty JSON writer the
//! outputs share (report.json too).

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::atomic;
use crate::hydro::{River, strahler_orders};
use crate::{Error, Result};

/// `rivers.geojson`: a FeatureCollection with one LineString per river, upstream first.
/// Coordinates are local world metres `[x, y, z]`: `x = column · cell size`,
/// `y = row · cell size` (rows go south, as in the heightmaps), `z` = the water surface
/// (filled surface) height in metres. Properties: `id`, `order` (Strahler order of the river
/// above its last vertex, which is the junction with the river it joins or its outlet),
/// `discharge_cells` and `drainage_area_m2` at that point, `max_width_m`, `length_m`, and
/// `grid`, the polyline in grid coordinates (column, row).
pub fn rivers_geojson(rivers: &[River], cell_size_m: f64, height_scale_m: f64) -> Value {
    let orders = strahler_orders(rivers);
    let features: Vec<Value> = rivers
        .iter()
        .zip(&orders)
        .enumerate()
        .map(|(id, (r, ord))| {
            let n = r.points.len();
            let own = n.saturating_sub(2);
            let coords: Vec<Value> = r
                .points
                .iter()
                .map(|p| {
                    json!([
                        p.x as f64 * cell_size_m,
                        p.y as f64 * cell_size_m,
                        p.height as f64 * height_scale_m
                    ])
                })
                .collect();
            let grid: Vec<Value> = r.points.iter().map(|p| json!([p.x, p.y])).collect();
            let length: f64 = r
                .points
                .windows(2)
                .map(|s| {
                    // √(dx² + dy²) of f32 steps: exact squares in f64, one rounding (no libm).
                    let (dx, dy) = ((s[1].x - s[0].x) as f64, (s[1].y - s[0].y) as f64);
                    (dx * dx + dy * dy).sqrt()
                })
                .sum::<f64>()
                * cell_size_m;
            let q = r.points.get(own).map_or(0.0, |p| p.discharge as f64);
            let width = r.points.iter().map(|p| p.width).fold(0.0f32, f32::max) as f64;
            json!({
                "type": "Feature",
                "geometry": {"type": "LineString", "coordinates": coords},
                "properties": {
                    "id": id,
                    "order": ord.get(own).copied().unwrap_or(1),
                    "discharge_cells": q,
                    "drainage_area_m2": q * cell_size_m * cell_size_m,
                    "max_width_m": width.max(1.0) * cell_size_m,
                    "length_m": length,
                    "grid": grid,
                },
            })
        })
        .collect();
    json!({
        "type": "FeatureCollection",
        "name": "rivers",
        "cell_size_m": cell_size_m,
        "features": features,
    })
}

/// Writes `value` as pretty JSON with a final newline, atomically and streamed (no text copy
/// in memory). Objects are written with their keys sorted: `value` goes through a
/// `serde_json::Value`, whose maps are ordered by key.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let json_err = |e: serde_json::Error| Error::Io { path: path.to_path_buf(), source: e.into() };
    let value = serde_json::to_value(value).map_err(json_err)?;
    atomic::write_atomic(path, |w| {
        serde_json::to_writer_pretty(&mut *w, &value).map_err(json_err)?;
        w.write_all(b"\n").map_err(|e| Error::Io { path: path.to_path_buf(), source: e })
    })
}
