//! The orbit camera of the 3D view: yaw, pitch and distance around a target on the map, its
//! view basis and the view-projection matrix both renderers use (see [`super`] for the
//! projection).

use serde::{Deserialize, Serialize};
use terrasynth::Heightmap;

use super::{DETAIL_RANGE, FOCAL, MOVING_DETAIL, NEAR_FAR, cross, dot, normalize, sub, z_scale};

/// Orbit camera around a target point on the map.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Camera {
    /// Rotation around the vertical axis, radians.
    pub yaw: f32,
    /// Elevation above the horizon, radians, in [0.05, 1.55].
    pub pitch: f32,
    /// Distance from the target, map widths, in [0.2, 6].
    pub distance: f32,
    /// Target point (X, Y), map widths from the centre.
    pub target: [f32; 2],
    /// Vertical exaggeration, in [0.1, 20]; default 2.
    pub exaggeration: f32,
    /// Mesh detail while the camera rests: samples along the longer side, in [32, 1024];
    /// default 256. Half of it is used while the camera moves.
    pub detail: u32,
}

impl Default for Camera {
    fn default() -> Self {
        Self { yaw: -2.2, pitch: 0.6, distance: 1.6, target: [0.0, 0.0], exaggeration: 2.0, detail: 256 }
    }
}

/// Camera position and orthonormal view basis in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewBasis {
    /// Eye position.
    pub eye: [f32; 3],
    /// Unit vector from the eye towards the target.
    pub forward: [f32; 3],
    /// Unit vector to the right of the image.
    pub right: [f32; 3],
    /// Unit vector to the top of the image.
    pub up: [f32; 3],
}

impl Camera {
    /// Orbit by a mouse drag of `(dx, dy)` points.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.01;
        self.pitch = (self.pitch + dy * 0.01).clamp(0.05, 1.55);
    }

    /// Pan the target by a drag of `(dx, dy)` points on a view `width` points wide.
    pub fn pan(&mut self, dx: f32, dy: f32, width: f32) {
        let k = self.distance / width.max(1.0);
        let (s, c) = self.yaw.sin_cos();
        // Screen right is (−sin yaw, cos yaw); screen up (towards the target) is −(cos yaw, sin yaw).
        self.target[0] = (self.target[0] - (-s * dx) * k + c * dy * k).clamp(-1.0, 1.0);
        self.target[1] = (self.target[1] - (c * dx) * k + s * dy * k).clamp(-1.0, 1.0);
    }

    /// Zoom by a scroll of `delta` points (positive = closer).
    pub fn zoom(&mut self, delta: f32) {
        self.distance = (self.distance * (-delta * 0.002).exp()).clamp(0.2, 6.0);
    }

    /// Samples a side of the mesh to draw: [`Camera::detail`] at rest; while `moving` the same
    /// up to [`MOVING_DETAIL`] (so starting or ending a drag does not switch meshes), above it
    /// half of it, at least [`MOVING_DETAIL`].
    pub fn lod_detail(&self, moving: bool) -> u32 {
        let d = self.detail.clamp(DETAIL_RANGE[0], DETAIL_RANGE[1]);
        if moving && d > MOVING_DETAIL { (d / 2).max(MOVING_DETAIL) } else { d }
    }

    /// Eye and view basis for a mesh whose sea level is at `sea_z` (exaggeration 1): the target
    /// is `(target, max(0, sea_z·e) / 2)` and the eye is `distance` away at `yaw`, `pitch`.
    pub fn basis(&self, sea_z: f32) -> ViewBasis {
        let (sp, cp) = self.pitch.sin_cos();
        let (sy, cy) = self.yaw.sin_cos();
        let target = [self.target[0], self.target[1], (sea_z * self.exaggeration).max(0.0) * 0.5];
        let eye = [
            target[0] + self.distance * cp * cy,
            target[1] + self.distance * cp * sy,
            target[2] + self.distance * sp,
        ];
        let forward = normalize(sub(target, eye));
        let right = normalize(cross(forward, [0.0, 0.0, 1.0]));
        let up = cross(right, forward);
        ViewBasis { eye, forward, right, up }
    }

    /// Raises the camera (pitch first, then distance) until the eye is at least 0.01 map
    /// widths above the ground under it, so zooming or orbiting never puts the eye inside a
    /// mountain. `map`, `height_scale` and `sea_level` as for [`Mesh3d::build`].
    pub fn keep_above(&mut self, map: &Heightmap, height_scale: f32, sea_level: f32) {
        let (w, h) = (map.width(), map.height());
        let span = (w.max(h) - 1).max(1) as f32;
        let zk = z_scale(map, height_scale);
        let ground = |x: f32, y: f32| {
            let cx = ((x + (w - 1) as f32 / span * 0.5) * span).round();
            let cy = (((h - 1) as f32 / span * 0.5 - y) * span).round();
            if cx < 0.0 || cy < 0.0 || cx > (w - 1) as f32 || cy > (h - 1) as f32 {
                return f32::NEG_INFINITY;
            }
            map[(cx as usize, cy as usize)] * zk * self.exaggeration
        };
        for _ in 0..200 {
            let eye = self.basis(sea_level * zk).eye;
            if eye[2] >= ground(eye[0], eye[1]) + 0.01 {
                return;
            }
            if self.pitch < 1.55 {
                self.pitch = (self.pitch + 0.02).min(1.55);
            } else if self.distance < 6.0 {
                self.distance = (self.distance * 1.05).min(6.0);
            } else {
                return;
            }
        }
    }

    /// The view-projection matrix (column-major, `m[column][row]`) for an image of `aspect` =
    /// width / height: clip `x = 2·FOCAL/aspect · x_view`, `y = 2·FOCAL · y_view`, `w = z_view`
    /// (distance along the view direction), and depth `z_ndc = f/(f−n) · (1 − n / z_view)`
    /// (0 at the near plane, 1 at the far plane), matching [`Mesh3d::render`].
    pub fn view_proj(&self, sea_z: f32, aspect: f32) -> [[f32; 4]; 4] {
        let b = self.basis(sea_z);
        let [n, f] = NEAR_FAR;
        let a = f / (f - n);
        let rows = [
            scale4(row(b.right, b.eye), 2.0 * FOCAL / aspect.max(1e-6)),
            scale4(row(b.up, b.eye), 2.0 * FOCAL),
            {
                let mut r = scale4(row(b.forward, b.eye), a);
                r[3] -= a * n;
                r
            },
            row(b.forward, b.eye),
        ];
        std::array::from_fn(|c| std::array::from_fn(|r| rows[r][c]))
    }
}

/// Row `[v, −v·eye]` of a view matrix.
fn row(v: [f32; 3], eye: [f32; 3]) -> [f32; 4] {
    [v[0], v[1], v[2], -dot(v, eye)]
}

fn scale4(r: [f32; 4], k: f32) -> [f32; 4] {
    r.map(|x| x * k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_projects_like_the_software_renderer() {
        let cam = Camera { yaw: 0.7, pitch: 0.5, distance: 1.3, target: [0.1, -0.2], ..Camera::default() };
        let (w, h) = (320.0f32, 200.0f32);
        let m = cam.view_proj(0.05, w / h);
        let b = cam.basis(0.05);
        for p in [[0.0, 0.0, 0.0], [0.3, -0.4, 0.1], [-0.5, 0.5, 0.02]] {
            let clip: [f32; 4] =
                std::array::from_fn(|r| (0..3).map(|c| m[c][r] * p[c]).sum::<f32>() + m[3][r]);
            let d = sub(p, b.eye);
            let vz = dot(d, b.forward);
            // Software: x = w/2 + 0.9·h·x_view/z_view; y = h/2 − 0.9·h·y_view/z_view.
            let sx = w * 0.5 + FOCAL * h * dot(d, b.right) / vz;
            let sy = h * 0.5 - FOCAL * h * dot(d, b.up) / vz;
            let gx = (clip[0] / clip[3] + 1.0) * 0.5 * w;
            let gy = (1.0 - clip[1] / clip[3]) * 0.5 * h;
            assert!((sx - gx).abs() < 1e-3 && (sy - gy).abs() < 1e-3, "{p:?}: {sx},{sy} vs {gx},{gy}");
            assert!((clip[3] - vz).abs() < 1e-5);
            let depth = clip[2] / clip[3];
            assert!(depth > 0.0 && depth < 1.0);
        }
    }

    #[test]
    fn the_eye_stays_above_the_ground() {
        // A tall plateau (Z = 0.5 at exaggeration 1) over the whole map.
        let map = Heightmap::from_fn(65, 65, 1.0, |_, _| 1.0).unwrap();
        let hs = 32.0; // Z per height unit = 32 / 64 = 0.5
        let mut cam = Camera { pitch: 0.1, distance: 0.3, exaggeration: 2.0, ..Camera::default() };
        // Target at max(0, sea·e)/2 = 0: the eye starts 0.03 high, inside the 1.0-high plateau.
        assert!(cam.basis(0.0).eye[2] < 1.0);
        cam.keep_above(&map, hs, 0.0);
        let eye = cam.basis(0.0).eye;
        assert!(eye[2] >= 1.01 || eye[0].abs() > 0.5 || eye[1].abs() > 0.5, "{eye:?} {cam:?}");
        assert!(cam.pitch > 0.1);
        // A camera already above the ground is left alone.
        let high = Camera::default();
        let mut c = high;
        c.keep_above(&map, 1.0, 0.0);
        assert_eq!(c, high);
    }

    #[test]
    fn lod_keeps_the_rest_mesh_while_moving_up_to_256() {
        let cam = Camera::default();
        assert_eq!((cam.lod_detail(false), cam.lod_detail(true)), (256, 256));
        let low = Camera { detail: 40, ..cam };
        assert_eq!((low.lod_detail(false), low.lod_detail(true)), (40, 40));
        let fine = Camera { detail: 1024, ..cam };
        assert_eq!((fine.lod_detail(false), fine.lod_detail(true)), (1024, 512));
        let mid = Camera { detail: 400, ..cam };
        assert_eq!(mid.lod_detail(true), 256);
        // Out-of-range details are clamped first.
        assert_eq!(Camera { detail: 5000, ..cam }.lod_detail(false), 1024);
    }
}
