//! `terrasynth-gui --bench-ui`: the editor's speed figures, measured on the CPU work each
//! interaction does (run it from a release build).
//!
//! 1. Brush stroke on a 1025² map: per frame, 4 dabs (radius 32 cells, spacing radius/4 = one
//!    frame's drag at 32 cells/frame) applied to the map plus recolouring the touched rectangle
//!    in shaded relief (what the editor uploads as a partial texture update). Reported as
//!    frames per second.
//! 2. Preview regeneration: the default island preset run at 513² (full pipeline).
//! 3. 3D view at 2049²: the real wgpu path on a headless device (on this machine lavapipe,
//!    Mesa's software Vulkan): the LOD mesh built and uploaded, then 60 frames while the
//!    camera orbits, waiting for the GPU after each frame (`device.poll(Wait)`); the median
//!    frame time, its fps and the process's CPU time per frame (lavapipe renders on the CPU, so
//!    on a loaded machine this says more than the wall time). Rows: at rest as the editor draws
//!    it (1280×800, 4× MSAA if available) and without MSAA; while moving as drawn (same mesh,
//!    640×400, no MSAA); the old moving frame (detail 128) and detail 512 for reference; a
//!    close-up (distance 0.3) with and without the near-camera patch. Then a few frames of the
//!    software fallback for comparison.

use std::time::Instant;

use terrasynth::recipe::{PipelineProgress, presets};
use terrasynth::shape::brush::{Brush, BrushMode};

use crate::document::Document;
use crate::maprender::{MapStyle, ViewMode, render_rect};
use crate::view3d::{Camera, Mesh3d};
use crate::view3d_gpu::GpuTerrain;

fn island(side: usize) -> Document {
    let mut r = presets()[0].recipe().expect("built-in preset");
    r.width = side;
    r.height = side;
    Document::new(r)
}

/// Runs the three measurements and prints one line each.
pub fn run() {
    let progress = PipelineProgress::new();
    // 1. Brush stroke at 1025².
    let doc = island(1025);
    let mut terrain = doc.build(&progress).expect("island builds");
    let palette = doc.recipe.palette.resolve().expect("palette");
    let (lo, hi) = terrain.height.min_max().unwrap_or((0.0, 1.0));
    let frames = 120;
    let t0 = Instant::now();
    for f in 0..frames {
        let mut rect: Option<(usize, usize, usize, usize)> = None;
        for k in 0..4 {
            let x = 200.0 + (f * 4 + k) as f64 * 8.0 * 0.3;
            let b = Brush { x, y: 400.0 + x * 0.2, radius: 32.0, strength: 0.005, mode: BrushMode::Raise };
            b.apply(&mut terrain.height).expect("dab");
            let r = b.bounds(1025, 1025);
            rect = Some(match rect {
                None => (r.x, r.y, r.w, r.h),
                Some((x0, y0, w0, h0)) => {
                    let (nx, ny) = (x0.min(r.x), y0.min(r.y));
                    (nx, ny, (x0 + w0).max(r.x + r.w) - nx, (y0 + h0).max(r.y + r.h) - ny)
                }
            });
        }
        let style =
            MapStyle::new(&palette, (lo, hi), terrain.sea_level, doc.recipe.exports.height_scale, None);
        if let Some(r) = rect {
            std::hint::black_box(render_rect(&terrain.height, &style, ViewMode::Shaded, r));
        }
    }
    let per = t0.elapsed().as_secs_f64() / frames as f64;
    println!(
        "brush stroke 1025²: {:.2} ms per frame (4 dabs r=32 + recolour), {:.0} fps",
        per * 1e3,
        1.0 / per
    );
    // 2. Preview at 513².
    let doc = island(513);
    let _ = doc.build(&progress).expect("warm-up");
    let runs = 5;
    let t0 = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(doc.build(&progress).expect("island builds"));
    }
    println!(
        "island preview 513²: {:.1} ms per regeneration (mean of {runs})",
        t0.elapsed().as_secs_f64() / runs as f64 * 1e3
    );
    // 3. 3D at 2049².
    let doc = island(2049);
    let terrain = doc.build(&progress).expect("island builds");
    let (lo, hi) = terrain.height.min_max().unwrap_or((0.0, 1.0));
    let fraction = palette.fraction_map(lo, hi, Some(terrain.sea_level));
    let hs = doc.recipe.exports.height_scale as f32;
    let cam = Camera::default();
    let build = |detail: u32| {
        let t0 = Instant::now();
        let mesh = Mesh3d::build(&terrain.height, &palette, &fraction, terrain.sea_level, hs, detail);
        (mesh, t0.elapsed().as_secs_f64())
    };
    let meshes = [build(cam.lod_detail(false)), build(cam.lod_detail(true)), build(128), build(512)];
    match crate::view3d_gpu::headless_device() {
        Ok((device, queue, adapter, samples)) => {
            println!("3D view 2049²: wgpu on {adapter}, {samples}× MSAA available");
            let mut gpu = GpuTerrain::new(&device, &queue, samples);
            // (mesh, size, MSAA, what)
            let cases: [(usize, [u32; 2], bool, &str); 6] = [
                (0, [1280, 800], true, "at rest as the editor draws it (MSAA)"),
                (0, [1280, 800], false, "at rest without MSAA"),
                (1, [640, 400], false, "while moving as the editor draws it (half resolution, stretched)"),
                (1, [1280, 800], false, "moving mesh at full resolution without MSAA"),
                (
                    2,
                    [640, 400],
                    false,
                    "detail 128 at half resolution (the moving frame before 2026-11-23 04:10)",
                ),
                (3, [1280, 800], false, "detail 512 without MSAA, for reference"),
            ];
            for (k, size, aa, what) in cases {
                if aa && samples == 1 {
                    continue;
                }
                let (mesh, build_s) = &meshes[k];
                let t0 = Instant::now();
                gpu.upload(k as u64, mesh);
                gpu.wait();
                let upload = t0.elapsed().as_secs_f64();
                gpu.set_antialias(aa);
                let (median, fps, cpu) = gpu_frames(&mut gpu, k as u64, cam, size, 60, 6.0);
                println!(
                    "3D view 2049²: {:.1} ms median per {}×{} frame ({fps:.0} fps; {:.1} ms CPU per frame, all \
                     threads), {what} (every {} cells, {} triangles); mesh build {:.1} ms + upload {:.1} ms",
                    median * 1e3,
                    size[0],
                    size[1],
                    cpu * 1e3,
                    mesh.step,
                    mesh.triangle_count(),
                    build_s * 1e3,
                    upload * 1e3
                );
            }
            // A close-up (distance 0.3, looking down 0.5 rad) with and without the finer
            // near-camera patch, orbiting slowly (0.003 rad per frame) so the patch stays valid.
            let close = Camera { distance: 0.3, pitch: 0.5, ..cam };
            let (mesh, _) = &meshes[0];
            let t0 = Instant::now();
            let rect = mesh.patch_rect(&close).expect("a patch close up");
            let patch = mesh.patch(&rect).expect("mesh has its source");
            let built = t0.elapsed().as_secs_f64();
            gpu.upload(0, mesh);
            let t0 = Instant::now();
            gpu.upload_patch(0, rect, &patch);
            gpu.wait();
            let upload = t0.elapsed().as_secs_f64();
            for (aa, with_patch) in [(false, false), (false, true), (true, true)] {
                if !with_patch {
                    gpu.clear_patch();
                } else if gpu.patch_info().is_none() {
                    gpu.upload_patch(0, rect, &patch);
                }
                gpu.set_antialias(aa && samples > 1);
                let (median, fps, cpu) = gpu_frames(&mut gpu, 0, close, [1280, 800], 60, 0.3);
                println!(
                    "3D view 2049² close-up (distance 0.3): {:.1} ms median per 1280×800 frame ({fps:.0} fps; {:.1} ms \
                     CPU per frame), {}{}",
                    median * 1e3,
                    cpu * 1e3,
                    if with_patch {
                        format!(
                            "with the near patch (every {} cells, {} triangles; built in {:.1} ms, uploaded in {:.1} ms)",
                            rect.fine,
                            patch.triangle_count(),
                            built * 1e3,
                            upload * 1e3
                        )
                    } else {
                        format!("coarse mesh only (every {} cells)", mesh.step)
                    },
                    if aa && samples > 1 {
                        ", MSAA (as drawn at rest)"
                    } else {
                        ", no MSAA (as drawn while moving)"
                    }
                );
            }
        }
        Err(e) => println!("3D view 2049² (wgpu): not measured, {e}"),
    }
    // The software fallback, for comparison (a few frames: it is slow).
    let (mesh, _) = &meshes[0];
    let mut cam = cam;
    let frames = 5;
    let t0 = Instant::now();
    for _ in 0..frames {
        cam.orbit(5.0, 0.0);
        std::hint::black_box(mesh.render(&cam, 1280, 800));
    }
    let per = t0.elapsed().as_secs_f64() / frames as f64;
    println!(
        "3D view 2049² (software fallback): {:.1} ms per 1280×800 frame ({:.1} fps), every {} cells ({} triangles)",
        per * 1e3,
        1.0 / per,
        mesh.step,
        mesh.triangle_count()
    );
}

/// Renders `frames` frames of mesh `key` while orbiting by `dx` points a frame (after 3 warm-up
/// frames), waiting for the GPU after each; returns the median frame time (s), the fps it
/// gives and the process CPU time per frame (s).
fn gpu_frames(
    gpu: &mut GpuTerrain,
    key: u64,
    mut cam: Camera,
    size: [u32; 2],
    frames: usize,
    dx: f32,
) -> (f64, f64, f64) {
    let mut times = Vec::with_capacity(frames);
    let mut cpu0 = 0.0;
    for f in 0..frames + 3 {
        if f == 3 {
            cpu0 = process_cpu_seconds();
        }
        cam.orbit(dx, if f % 40 < 20 { dx / 6.0 } else { -dx / 6.0 });
        let t0 = Instant::now();
        gpu.render(key, &cam, size).expect("mesh uploaded");
        gpu.wait();
        if f >= 3 {
            times.push(t0.elapsed().as_secs_f64());
        }
    }
    let cpu = (process_cpu_seconds() - cpu0) / frames as f64;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    (median, 1.0 / median, cpu)
}

/// User + system CPU time of this process (all threads, lavapipe's included), seconds, from
/// `/proc/self/stat` at 100 ticks per second; 0 where that file does not exist.
fn process_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    // Fields after the command name: state is field 3, utime 14 and stime 15.
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i - 3).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(14) + tick(15)) / 100.0
}
