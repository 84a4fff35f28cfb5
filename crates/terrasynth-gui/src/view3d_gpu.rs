//! The wgpu renderer of the 3D view: draws a [`Mesh3d`] offscreen into an `Rgba8Unorm` colour
//! texture with a `Depth32Float` depth buffer; the editor registers that texture with egui's
//! wgpu renderer and shows it as an image (so the terrain has its own depth buffer, and
//! snapshots and the benchmark see exactly what the window shows).
//!
//! One render pass per frame, three pipelines (shader `view3d_terrain.wgsl`):
//! 1. terrain: the LOD grid as an indexed triangle list, vertex buffer of [`Vertex3d`]
//!    (position at exaggeration 1, slope, palette colour): the vertex shader applies the
//!    exaggeration and the lighting of [`crate::view3d`] per vertex, so neither the camera nor
//!    the exaggeration rebuilds anything; depth test `Less`, depth write on. The index buffer
//!    holds the triangles in four orders, one per starting corner, and the frame draws the
//!    one that starts nearest the eye (front to back: hidden pixels fail the depth test
//!    before they are shaded, which matters on software rasterisers);
//! 2. sky: one full-screen triangle at the far plane, vertical gradient, drawn where the depth
//!    is still 1 (test `LessEqual`, no write), i.e. only where there is no terrain;
//! 3. water: the map rectangle at sea level (4-vertex strip made in the shader), alpha blended
//!    (`0.65 · water + 0.35 · behind`), depth test on, depth write off.
//!
//! When a near-camera patch ([`Mesh3d::patch`]) is uploaded for the mesh drawn, pass 1 draws
//! the patch first and then the grid without the squares under it
//! ([`Mesh3d::ranges_without`], one draw call per hole row).
//!
//! **MSAA**: where the adapter supports [`MSAA`] samples for both formats ([`msaa_samples`]),
//! the pipelines exist twice (1 and 4 samples); an antialiased frame draws into a
//! multisampled colour + depth target and resolves into the single-sampled colour texture
//! that egui shows. [`View3dGpu`] antialiases only frames of a camera at rest.
//!
//! A vertex buffer (not a height texture sampled in the vertex shader) was chosen because the
//! mesh is a small LOD sample of the map (≤ 1025² vertices), its normals and palette colours
//! are computed once on the CPU with the same code as the software fallback, and vertex
//! fetch is the cheapest path on software rasterisers such as lavapipe.
//!
//! Colours are written as sRGB values into a non-sRGB (`Rgba8Unorm`) target, which is what
//! egui expects of a user texture, and blending happens on those values like the software
//! renderer's. Meshes are kept in a small cache keyed by the caller (the editor keeps the rest
//! and the moving level of detail); uploading replaces the least recently used one.

use eframe::wgpu;
use eframe::wgpu::util::DeviceExt;

use crate::view3d::{Camera, Light, Mesh3d, PatchRect, SKY, Vertex3d, WATER};

/// Format of the colour target (what egui_wgpu expects of a native texture).
pub const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
/// Format of the depth buffer.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Samples per pixel wanted for antialiasing (MSAA); [`msaa_samples`] falls back to 1 where
/// the adapter cannot multisample or resolve the formats.
pub const MSAA: u32 = 4;
/// Meshes kept on the GPU at once.
const MESH_CACHE: usize = 2;
/// Size of the uniform block in bytes: a 4×4 matrix and five `vec4`.
const UNIFORM_BYTES: usize = 16 * 4 + 5 * 16;

/// A mesh uploaded to the GPU.
struct GpuMesh {
    key: u64,
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    sea_z: f32,
    half: [f32; 2],
    step: usize,
    triangles: usize,
    nx: usize,
    ny: usize,
    /// Centre of the grid (X, Y).
    mid: [f32; 2],
}

/// The offscreen colour and depth textures.
struct Target {
    size: [u32; 2],
    samples: u32,
    /// The single-sampled colour texture shown by egui (the resolve target under MSAA).
    color: wgpu::Texture,
    color_view: wgpu::TextureView,
    /// The multisampled colour texture drawn into (`None` without MSAA).
    msaa_view: Option<wgpu::TextureView>,
    depth_view: wgpu::TextureView,
}

/// Samples per pixel the renderer uses on `adapter`: [`MSAA`] if the colour and depth formats
/// support that count and the colour format can be resolved, else 1.
pub fn msaa_samples(adapter: &wgpu::Adapter) -> u32 {
    let color = adapter.get_texture_format_features(COLOR_FORMAT).flags;
    let depth = adapter.get_texture_format_features(DEPTH_FORMAT).flags;
    let ok = color.sample_count_supported(MSAA)
        && color.contains(wgpu::TextureFormatFeatureFlags::MULTISAMPLE_RESOLVE)
        && depth.sample_count_supported(MSAA);
    if ok { MSAA } else { 1 }
}

/// The three pipelines for one sample count.
struct Pipelines {
    samples: u32,
    sky: wgpu::RenderPipeline,
    terrain: wgpu::RenderPipeline,
    water: wgpu::RenderPipeline,
}

/// The terrain renderer on one wgpu device.
pub struct GpuTerrain {
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// Pipelines without MSAA, then (if the adapter has it) with MSAA.
    pipelines: Vec<Pipelines>,
    uniforms: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    meshes: Vec<GpuMesh>,
    /// The finer near-camera patch: (key of the coarse mesh it belongs to, where, the mesh).
    patch: Option<(u64, PatchRect, GpuMesh)>,
    target: Option<Target>,
    antialias: bool,
}

impl GpuTerrain {
    /// Creates the pipelines on `device` (cheap handles: wgpu devices and queues are shared)
    /// for 1 and `samples` samples per pixel (`samples` from [`msaa_samples`]; 1 = no MSAA).
    /// Frames are antialiased (drawn with `samples`) until [`GpuTerrain::set_antialias`] says
    /// otherwise.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, samples: u32) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("terrain-3d shader"),
            source: wgpu::ShaderSource::Wgsl(include_str!("view3d_terrain.wgsl").into()),
        });
        let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("terrain-3d uniforms"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: wgpu::BufferSize::new(UNIFORM_BYTES as u64),
                },
                count: None,
            }],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("terrain-3d layout"),
            bind_group_layouts: &[Some(&bgl)],
            immediate_size: 0,
        });
        let uniforms = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("terrain-3d uniforms"),
            size: UNIFORM_BYTES as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("terrain-3d uniforms"),
            layout: &bgl,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: uniforms.as_entire_binding() }],
        });
        let attributes = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x2, 2 => Unorm8x4];
        let vertex_layout = wgpu::VertexBufferLayout {
            array_stride: Vertex3d::BYTES as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &attributes,
        };
        let pipeline = |label: &str,
                        entry: &str,
                        buffers: &[Option<wgpu::VertexBufferLayout<'_>>],
                        topology: wgpu::PrimitiveTopology,
                        depth_write: bool,
                        depth_compare: wgpu::CompareFunction,
                        blend: Option<wgpu::BlendState>,
                        samples: u32| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module: &shader,
                    entry_point: Some(&format!("vs_{entry}")),
                    compilation_options: Default::default(),
                    buffers,
                },
                primitive: wgpu::PrimitiveState { topology, cull_mode: None, ..Default::default() },
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(depth_write),
                    depth_compare: Some(depth_compare),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: wgpu::MultisampleState { count: samples, ..Default::default() },
                fragment: Some(wgpu::FragmentState {
                    module: &shader,
                    entry_point: Some(&format!("fs_{entry}")),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format: COLOR_FORMAT,
                        blend,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let set = |samples: u32| Pipelines {
            samples,
            sky: pipeline(
                "terrain-3d sky",
                "sky",
                &[],
                wgpu::PrimitiveTopology::TriangleList,
                false,
                wgpu::CompareFunction::LessEqual,
                None,
                samples,
            ),
            terrain: pipeline(
                "terrain-3d terrain",
                "terrain",
                &[Some(vertex_layout.clone())],
                wgpu::PrimitiveTopology::TriangleList,
                true,
                wgpu::CompareFunction::Less,
                None,
                samples,
            ),
            water: pipeline(
                "terrain-3d water",
                "water",
                &[],
                wgpu::PrimitiveTopology::TriangleStrip,
                false,
                wgpu::CompareFunction::Less,
                Some(wgpu::BlendState::ALPHA_BLENDING),
                samples,
            ),
        };
        let pipelines = if samples > 1 { vec![set(1), set(samples)] } else { vec![set(1)] };
        Self {
            device: device.clone(),
            queue: queue.clone(),
            pipelines,
            uniforms,
            bind_group,
            meshes: Vec::new(),
            patch: None,
            target: None,
            antialias: true,
        }
    }

    /// Whether the next frames use MSAA (if the adapter has it): the editor turns it off
    /// while the camera moves (4× MSAA costs ≈ 3.5× the frame time on lavapipe).
    pub fn set_antialias(&mut self, on: bool) {
        self.antialias = on;
    }

    /// Whether a mesh with this key is on the GPU.
    pub fn has_mesh(&self, key: u64) -> bool {
        self.meshes.iter().any(|m| m.key == key)
    }

    /// (cells between samples, triangles) of the mesh `key`, if it is on the GPU.
    pub fn mesh_info(&self, key: u64) -> Option<(usize, usize)> {
        self.meshes.iter().find(|m| m.key == key).map(|m| (m.step, m.triangles))
    }

    /// Uploads `mesh` under `key` (replacing a mesh with the same key, or the least recently
    /// used one when the cache is full).
    pub fn upload(&mut self, key: u64, mesh: &Mesh3d) {
        self.meshes.retain(|m| m.key != key);
        if self.patch.as_ref().is_some_and(|(k, _, _)| *k == key) {
            self.patch = None;
        }
        if self.meshes.len() >= MESH_CACHE {
            self.meshes.pop();
        }
        let m = self.gpu_mesh(key, mesh);
        self.meshes.insert(0, m);
    }

    /// Uploads `mesh` (from [`Mesh3d::patch`]) as the finer patch over `rect` of the mesh
    /// `key`, replacing any previous patch; [`GpuTerrain::render`] of `key` then draws it and
    /// leaves that hole in the coarse grid.
    pub fn upload_patch(&mut self, key: u64, rect: PatchRect, mesh: &Mesh3d) {
        let m = self.gpu_mesh(key, mesh);
        self.patch = Some((key, rect, m));
    }

    /// Drops the patch.
    pub fn clear_patch(&mut self) {
        self.patch = None;
    }

    /// The patch on the GPU: (key of its coarse mesh, where, its (cells between samples, triangles)).
    pub fn patch_info(&self) -> Option<(u64, PatchRect, (usize, usize))> {
        self.patch.as_ref().map(|(k, r, m)| (*k, *r, (m.step, m.triangles)))
    }

    fn gpu_mesh(&self, key: u64, mesh: &Mesh3d) -> GpuMesh {
        // Four drawing orders, one per starting corner (index = from_east + 2·from_south).
        let mut index_bytes = Vec::with_capacity(4 * 4 * 3 * mesh.triangle_count());
        for corner in 0..4 {
            for i in mesh.indices_from(corner & 1 == 1, corner & 2 == 2) {
                index_bytes.extend_from_slice(&i.to_le_bytes());
            }
        }
        let vertices = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("terrain-3d vertices"),
            contents: &mesh.vertex_bytes(),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let index_buf = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("terrain-3d indices"),
            contents: &index_bytes,
            usage: wgpu::BufferUsages::INDEX,
        });
        GpuMesh {
            key,
            vertices,
            indices: index_buf,
            index_count: (3 * mesh.triangle_count()) as u32,
            sea_z: mesh.sea_z,
            half: mesh.half,
            step: mesh.step,
            triangles: mesh.triangle_count(),
            nx: mesh.nx,
            ny: mesh.ny,
            mid: {
                let (a, b) = (mesh.vertices[0].pos, mesh.vertices[mesh.nx * mesh.ny - 1].pos);
                [(a[0] + b[0]) * 0.5, (a[1] + b[1]) * 0.5]
            },
        }
    }

    /// Drops every mesh (e.g. when the map changes).
    pub fn clear_meshes(&mut self) {
        self.meshes.clear();
        self.patch = None;
    }

    /// Renders the mesh `key` seen from `cam` into the offscreen target of `size` pixels
    /// (recreated when the size changes) and submits the work. Returns `None` if no mesh has
    /// that key, else whether the target texture was recreated (its view must then be
    /// registered with egui again).
    pub fn render(&mut self, key: u64, cam: &Camera, size: [u32; 2]) -> Option<bool> {
        let pos = self.meshes.iter().position(|m| m.key == key)?;
        if pos != 0 {
            let m = self.meshes.remove(pos);
            self.meshes.insert(0, m);
        }
        let size = [size[0].clamp(8, 4096), size[1].clamp(8, 4096)];
        let set = if self.antialias { self.pipelines.len() - 1 } else { 0 };
        let samples = self.pipelines[set].samples;
        let recreated = self.target.as_ref().is_none_or(|t| t.size != size || t.samples != samples);
        if recreated {
            self.target = Some(self.make_target(size, samples));
        }
        let pipes = &self.pipelines[set];
        let (Some(target), Some(mesh)) = (&self.target, self.meshes.first()) else { return None };
        self.queue.write_buffer(&self.uniforms, 0, &uniform_bytes(cam, mesh, size));
        let mut encoder =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("terrain-3d") });
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("terrain-3d"),
                // Under MSAA: draw into the multisampled texture and resolve into the shown one
                // (the samples themselves are not kept).
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: target.msaa_view.as_ref().unwrap_or(&target.color_view),
                    depth_slice: None,
                    resolve_target: target.msaa_view.as_ref().map(|_| &target.color_view),
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: if target.msaa_view.is_some() {
                            wgpu::StoreOp::Discard
                        } else {
                            wgpu::StoreOp::Store
                        },
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &target.depth_view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_bind_group(0, &self.bind_group, &[]);
            pass.set_pipeline(&pipes.terrain);
            // Front to back: start from the map corner nearest the eye (of the patch first:
            // it is around the camera target, usually the nearest ground).
            let eye = cam.basis(mesh.sea_z).eye;
            let patch = self.patch.as_ref().filter(|(k, _, _)| *k == mesh.key);
            if let Some((_, _, p)) = patch {
                let (from_east, from_south) = (eye[0] > p.mid[0], eye[1] < p.mid[1]);
                let corner = u32::from(from_east) + 2 * u32::from(from_south);
                pass.set_vertex_buffer(0, p.vertices.slice(..));
                pass.set_index_buffer(p.indices.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(corner * p.index_count..(corner + 1) * p.index_count, 0, 0..1);
            }
            let (from_east, from_south) = (eye[0] > mesh.mid[0], eye[1] < mesh.mid[1]);
            let corner = u32::from(from_east) + 2 * u32::from(from_south);
            let n = mesh.index_count;
            pass.set_vertex_buffer(0, mesh.vertices.slice(..));
            pass.set_index_buffer(mesh.indices.slice(..), wgpu::IndexFormat::Uint32);
            match patch {
                Some((_, rect, _)) => {
                    for r in Mesh3d::ranges_without(mesh.nx, mesh.ny, from_east, from_south, rect) {
                        pass.draw_indexed(corner * n + r.start..corner * n + r.end, 0, 0..1);
                    }
                }
                None => pass.draw_indexed(corner * n..(corner + 1) * n, 0, 0..1),
            }
            // The sky only where no terrain was drawn (depth still 1).
            pass.set_pipeline(&pipes.sky);
            pass.draw(0..3, 0..1);
            pass.set_pipeline(&pipes.water);
            pass.draw(0..4, 0..1);
        }
        self.queue.submit([encoder.finish()]);
        Some(recreated)
    }

    /// The colour target's view (to register with egui), once something was rendered.
    pub fn target_view(&self) -> Option<&wgpu::TextureView> {
        self.target.as_ref().map(|t| &t.color_view)
    }

    /// Blocks until the GPU has finished all submitted work.
    pub fn wait(&self) {
        // An error here means the device was lost; the next frame reports it through wgpu.
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
    }

    /// Reads the last rendered image back (RGBA8, rows top to bottom; blocks). `None` before
    /// the first render or if the read-back fails.
    pub fn read_pixels(&self) -> Option<([u32; 2], Vec<u8>)> {
        let target = self.target.as_ref()?;
        let [w, h] = target.size;
        let row = (w * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("terrain-3d read-back"),
            size: u64::from(row * h),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("terrain-3d read-back") });
        encoder.copy_texture_to_buffer(
            target.color.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(row),
                    rows_per_image: None,
                },
            },
            wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
        );
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r.is_ok());
        });
        self.wait();
        if !rx.recv().ok()? {
            return None;
        }
        let mut out = Vec::with_capacity((w * h * 4) as usize);
        {
            let view = buffer.slice(..).get_mapped_range().ok()?;
            for r in view.chunks(row as usize) {
                out.extend_from_slice(&r[..(w * 4) as usize]);
            }
        }
        buffer.unmap();
        Some(([w, h], out))
    }

    fn make_target(&self, size: [u32; 2], n: u32) -> Target {
        let extent = wgpu::Extent3d { width: size[0], height: size[1], depth_or_array_layers: 1 };
        let texture = |label: &str, format: wgpu::TextureFormat, usage: wgpu::TextureUsages, samples: u32| {
            self.device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: extent,
                mip_level_count: 1,
                sample_count: samples,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let color = texture(
            "terrain-3d colour",
            COLOR_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
            1,
        );
        let msaa = (n > 1).then(|| {
            texture("terrain-3d colour (MSAA)", COLOR_FORMAT, wgpu::TextureUsages::RENDER_ATTACHMENT, n)
        });
        let depth = texture("terrain-3d depth", DEPTH_FORMAT, wgpu::TextureUsages::RENDER_ATTACHMENT, n);
        Target {
            size,
            samples: n,
            color_view: color.create_view(&Default::default()),
            msaa_view: msaa.map(|t| t.create_view(&Default::default())),
            depth_view: depth.create_view(&Default::default()),
            color,
        }
    }
}

/// The uniform block (layout of `Uniforms` in `view3d_terrain.wgsl`), little-endian.
fn uniform_bytes(cam: &Camera, mesh: &GpuMesh, size: [u32; 2]) -> Vec<u8> {
    let m = cam.view_proj(mesh.sea_z, size[0] as f32 / size[1] as f32);
    let e = cam.exaggeration;
    let srgb = |c: [f32; 3], a: f32| [c[0] / 255.0, c[1] / 255.0, c[2] / 255.0, a];
    let light = Light::library();
    let vecs: [[f32; 4]; 5] = [
        [light.sun[0], light.sun[1], light.sun[2], e],
        [mesh.half[0], mesh.half[1], mesh.sea_z * e, WATER.1],
        srgb(WATER.0, light.ambient),
        srgb(SKY[0], 1.0),
        srgb(SKY[1], 1.0),
    ];
    let out: Vec<u8> = m.iter().chain(&vecs).flatten().flat_map(|v| v.to_le_bytes()).collect();
    debug_assert_eq!(out.len(), UNIFORM_BYTES);
    out
}

/// A wgpu device without a window (benchmark, tests): the first adapter wgpu finds (on this
/// machine lavapipe, "llvmpipe"), or an error naming why there is none. Also returns the
/// adapter's name and backend, and the samples per pixel to draw with ([`msaa_samples`]).
pub fn headless_device() -> Result<(wgpu::Device, wgpu::Queue, String, u32), String> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
        .map_err(|e| format!("no wgpu adapter: {e}"))?;
    let info = adapter.get_info();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("terrasynth headless"),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|e| format!("no wgpu device on {}: {e}", info.name))?;
    Ok((device, queue, format!("{} ({:?})", info.name, info.backend), msaa_samples(&adapter)))
}

/// What a frame showed: mesh key, size, camera bits, antialiased, patch.
type Drawn = (u64, [u32; 2], [u32; 6], bool, Option<PatchRect>);

/// The 3D view's GPU side inside the editor: the renderer on eframe's wgpu device and the egui
/// texture id under which its colour target is shown.
pub struct View3dGpu {
    render_state: eframe::egui_wgpu::RenderState,
    terrain: GpuTerrain,
    texture: Option<eframe::egui::TextureId>,
    /// What the target shows: (mesh key, size, camera bits, antialiased, patch); `None` = must
    /// redraw.
    drawn: Option<Drawn>,
    /// The last mesh built (kept to cut finer patches from it) and its key.
    base: Option<(u64, Mesh3d)>,
    /// The camera of the previous call to [`View3dGpu::draw`].
    last_cam: Option<[u32; 6]>,
}

impl View3dGpu {
    /// Renderer on eframe's device (from `CreationContext::wgpu_render_state`).
    pub fn new(render_state: &eframe::egui_wgpu::RenderState) -> Self {
        Self {
            terrain: GpuTerrain::new(
                &render_state.device,
                &render_state.queue,
                msaa_samples(&render_state.adapter),
            ),
            render_state: render_state.clone(),
            texture: None,
            drawn: None,
            last_cam: None,
            base: None,
        }
    }

    /// Draws the mesh `key` (built by `build` only if it is not on the GPU yet) seen from
    /// `cam` at `size` pixels, unless the same picture is already in the target. Returns the
    /// egui texture to show and the mesh's (cells between samples, triangles). A camera that
    /// did not change since the previous call is at rest: that frame is drawn with MSAA (once;
    /// nothing is redrawn while it stays), frames of a moving camera without.
    pub fn draw(
        &mut self,
        key: u64,
        build: impl FnOnce() -> Mesh3d,
        cam: &Camera,
        size: [u32; 2],
    ) -> Option<(eframe::egui::TextureId, (usize, usize))> {
        if !self.terrain.has_mesh(key) {
            let mesh = build();
            self.terrain.upload(key, &mesh);
            self.base = Some((key, mesh));
        }
        // Distance-aware detail: the finer patch around the camera target, rebuilt only when
        // its rectangle changes (a pan across a coarse grid line, a zoom past a quarter power
        // of two).
        let base = self.base.as_ref().filter(|(k, _)| *k == key).map(|(_, m)| m);
        let want = base.and_then(|m| m.patch_rect(cam));
        let have = self.terrain.patch_info().filter(|(k, _, _)| *k == key).map(|(_, r, _)| r);
        if want != have {
            match (want, base) {
                (Some(rect), Some(m)) => match m.patch(&rect) {
                    Some(p) => self.terrain.upload_patch(key, rect, &p),
                    None => self.terrain.clear_patch(),
                },
                _ => self.terrain.clear_patch(),
            }
        }
        let patch = self.terrain.patch_info().filter(|(k, _, _)| *k == key);
        let cam_bits = [cam.yaw, cam.pitch, cam.distance, cam.target[0], cam.target[1], cam.exaggeration]
            .map(f32::to_bits);
        let still = self.last_cam.is_none_or(|c| c == cam_bits);
        self.last_cam = Some(cam_bits);
        let want = (key, size, cam_bits, still, patch.map(|(_, r, _)| r));
        if self.drawn != Some(want) || self.texture.is_none() {
            self.terrain.set_antialias(still);
            let recreated = self.terrain.render(key, cam, size)?;
            let view = self.terrain.target_view()?;
            let mut renderer = self.render_state.renderer.write();
            let device = &self.render_state.device;
            match self.texture {
                Some(id) if recreated => {
                    renderer.update_egui_texture_from_wgpu_texture(device, view, wgpu::FilterMode::Linear, id)
                }
                Some(_) => {}
                None => {
                    self.texture =
                        Some(renderer.register_native_texture(device, view, wgpu::FilterMode::Linear))
                }
            }
            self.drawn = Some(want);
        }
        let (step, triangles) = self.terrain.mesh_info(key)?;
        let lod = match patch {
            // The finest step drawn, and the triangles: coarse minus the hole, plus the patch.
            Some((_, r, (fine, t))) => (fine, triangles - 2 * (r.i1 - r.i0) * (r.j1 - r.j0) + t),
            None => (step, triangles),
        };
        Some((self.texture?, lod))
    }

    /// Whether a frame was drawn and registered with egui.
    pub fn has_image(&self) -> bool {
        self.texture.is_some()
    }
}

#[cfg(test)]
mod tests {
    use terrasynth::Heightmap;
    use terrasynth::render::Palette;

    use super::*;
    use crate::view3d::light_factor;

    /// A single Gaussian peak with a flat top (height 1 within ≈ 5 cells of the centre, ≈ 0 at
    /// the edges) on a 65² map.
    fn peak() -> Heightmap {
        Heightmap::from_fn(65, 65, 1.0, |x, y| {
            let (dx, dy) = (x as f32 - 32.0, y as f32 - 32.0);
            (1.25 * (-(dx * dx + dy * dy) / 120.0).exp()).min(1.0)
        })
        .unwrap()
    }

    fn device() -> Option<(wgpu::Device, wgpu::Queue, u32)> {
        match headless_device() {
            Ok((d, q, _, n)) => Some((d, q, n)),
            Err(e) => {
                println!("skipped: {e} (install mesa-vulkan-drivers for lavapipe)");
                None
            }
        }
    }

    fn pixel(img: &[u8], w: u32, x: u32, y: u32) -> [f32; 3] {
        let k = ((y * w + x) * 4) as usize;
        [img[k] as f32, img[k + 1] as f32, img[k + 2] as f32]
    }

    fn assert_near(got: [f32; 3], want: [f32; 3], tol: f32, what: &str) {
        assert!(
            got.iter().zip(want).all(|(g, w)| (g - w).abs() <= tol),
            "{what}: got {got:?}, want {want:?}"
        );
    }

    #[test]
    fn renders_a_peak_seen_from_above() {
        let Some((device, queue, samples)) = device() else { return };
        let map = peak();
        let palette = Palette::named("grayscale").unwrap();
        let sea = 0.3;
        let fraction = palette.fraction_map(0.0, 1.0, Some(sea));
        let mesh = Mesh3d::build(&map, &palette, &fraction, sea, 20.0, 64);
        assert_eq!(mesh.step, 2);
        let mut gpu = GpuTerrain::new(&device, &queue, samples);
        assert!(gpu.render(7, &Camera::default(), [64, 64]).is_none(), "no mesh yet");
        gpu.upload(7, &mesh);
        let cam = Camera { yaw: -1.0, pitch: 1.55, distance: 1.6, exaggeration: 1.0, ..Camera::default() };
        let (w, h) = (480u32, 360u32);
        assert_eq!(gpu.render(7, &cam, [w, h]), Some(true));
        let ([rw, rh], img) = gpu.read_pixels().expect("read back");
        assert_eq!((rw, rh, img.len()), (w, h, (w * h * 4) as usize));
        // Image corners are outside the map: the sky gradient (top row = SKY[0]).
        assert_near(pixel(&img, w, 0, 0), SKY[0], 2.0, "sky, top left");
        let t = (h - 1) as f32 / h as f32;
        let bottom = std::array::from_fn(|c| SKY[0][c] + (SKY[1][c] - SKY[0][c]) * (t + 0.5 / h as f32));
        assert_near(pixel(&img, w, w - 1, h - 1), bottom, 2.0, "sky, bottom right");
        // Where a point lands in the image, through the same matrix as the shader.
        let project = |p: [f32; 3]| {
            let m = cam.view_proj(mesh.sea_z, w as f32 / h as f32);
            let c: [f32; 4] = std::array::from_fn(|r| (0..3).map(|k| m[k][r] * p[k]).sum::<f32>() + m[3][r]);
            (((c[0] / c[3] + 1.0) * 0.5 * w as f32) as u32, ((1.0 - c[1] / c[3]) * 0.5 * h as f32) as u32)
        };
        // The flat summit (white in grayscale) lit as flat ground.
        let top = mesh.vertices[(mesh.ny / 2) * mesh.nx + mesh.nx / 2];
        let (x, y) = project(top.pos);
        let lit = top.color[0] as f32 * light_factor([0.0, 0.0], 1.0);
        assert_near(pixel(&img, w, x, y), [lit; 3], 4.0, "summit");
        // Near a map corner the ground (height ≈ 0, black) is under water: 0.65 · water.
        let (x, y) = project([0.45, -0.45, 0.0]);
        let under = [0.0; 3].map(|c: f32| c * (1.0 - WATER.1));
        let want: [f32; 3] = std::array::from_fn(|c| under[c] + WATER.0[c] * WATER.1);
        assert_near(pixel(&img, w, x, y), want, 3.0, "water");
        // Half-way up the peak the ground is above the sea: grey (no blue tint), lit per vertex;
        // the north-west flank faces the sun and is brighter than the south-east one.
        let flank = |di: isize| {
            let (c, r) = ((mesh.nx / 2) as isize + di, (mesh.ny / 2) as isize + di);
            let v = mesh.vertices[r as usize * mesh.nx + c as usize];
            assert!(v.pos[2] > mesh.sea_z);
            let (x, y) = project(v.pos);
            let p = pixel(&img, w, x, y);
            let lit = v.color[0] as f32 * light_factor(v.grad, 1.0);
            assert_near(p, [lit; 3], 10.0, "flank");
            p[0]
        };
        let (north_west, south_east) = (flank(-3), flank(3));
        assert!(north_west > south_east + 40.0, "{north_west} vs {south_east}");
    }

    /// The peak seen from the side as 128×96 RGBA pixels, drawn by the GPU with `samples`
    /// samples per pixel, and the software fallback's picture of the same mesh.
    fn side_view(device: &wgpu::Device, queue: &wgpu::Queue, samples: u32) -> (Vec<u8>, Vec<[u8; 4]>) {
        let map = peak();
        let palette = Palette::named("classic").unwrap();
        let fraction = palette.fraction_map(0.0, 1.0, Some(0.2));
        let mesh = Mesh3d::build(&map, &palette, &fraction, 0.2, 20.0, 64);
        let cam = Camera { yaw: -2.2, pitch: 0.5, distance: 1.2, exaggeration: 3.0, ..Camera::default() };
        let (w, h) = (128u32, 96u32);
        let mut gpu = GpuTerrain::new(device, queue, samples);
        gpu.upload(1, &mesh);
        gpu.render(1, &cam, [w, h]).expect("mesh uploaded");
        let (_, img) = gpu.read_pixels().expect("read back");
        let soft = mesh.render(&cam, w as usize, h as usize);
        (img, soft.pixels.iter().map(|c| c.to_array()).collect())
    }

    /// Pixels whose colour differs by more than `tol` in a channel.
    fn count_differing(gpu: &[u8], other: &[[u8; 4]], tol: i32) -> usize {
        other
            .iter()
            .enumerate()
            .filter(|(k, c)| {
                c[..3].iter().zip(&gpu[k * 4..k * 4 + 3]).any(|(a, b)| (*a as i32 - *b as i32).abs() > tol)
            })
            .count()
    }

    #[test]
    fn gpu_and_software_renderers_agree() {
        let Some((device, queue, samples)) = device() else { return };
        // Without MSAA only pixels on silhouettes and the shoreline may differ (rasterisation
        // rules); with it those pixels are blends, a few more.
        for (n, percent) in [(1, 3), (samples, 6)] {
            let (img, soft) = side_view(&device, &queue, n);
            let far = count_differing(&img, &soft, 12);
            assert!(far * 100 < soft.len() * percent, "{n}× MSAA: {far} of {} pixels differ", soft.len());
        }
    }

    #[test]
    fn msaa_blends_only_the_edges() {
        let Some((device, queue, samples)) = device() else { return };
        if samples == 1 {
            println!("skipped: the adapter has no {MSAA}× MSAA");
            return;
        }
        let (plain, _) = side_view(&device, &queue, 1);
        let (aa, _) = side_view(&device, &queue, samples);
        let plain: Vec<[u8; 4]> = plain.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
        // Silhouette, shoreline and wall edges change (some tens of pixels at least); the
        // inside of every surface is shaded once per pixel either way, so stays the same.
        let changed = count_differing(&aa, &plain, 2);
        assert!(changed > 40 && changed * 100 < plain.len() * 8, "{changed} of {} pixels", plain.len());
        // A pixel whose 3×3 neighbourhood is uniform without MSAA is not on an edge: unchanged.
        let (w, h) = (128usize, 96usize);
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let c = plain[y * w + x];
                let flat = (0..9).all(|k| plain[(y + k / 3 - 1) * w + x + k % 3 - 1] == c);
                let g = &aa[(y * w + x) * 4..(y * w + x) * 4 + 3];
                if flat {
                    assert!(
                        c[..3].iter().zip(g).all(|(a, b)| (*a as i32 - *b as i32).abs() <= 2),
                        "({x}, {y})"
                    );
                }
            }
        }
    }

    #[test]
    fn the_patch_draws_the_full_detail_near_the_target() {
        let Some((device, queue, _)) = device() else { return };
        // Rolling hills with detail at every scale (no two neighbouring cells alike).
        let map = Heightmap::from_fn(513, 513, 1.0, |x, y| {
            let (u, v) = (x as f32 * 0.11, y as f32 * 0.13);
            0.5 + 0.25 * (u.sin() * v.cos()) + 0.1 * (3.1 * u + 1.7 * v).sin()
        })
        .unwrap();
        let palette = Palette::named("classic").unwrap();
        let fraction = palette.fraction_map(0.0, 1.0, Some(0.0));
        let build = |detail| Mesh3d::build(&map, &palette, &fraction, 0.0, 4.0, detail);
        let (coarse, full) = (build(64), build(1024));
        assert_eq!((coarse.step, full.step), (9, 1));
        let cam = Camera { pitch: 0.8, distance: 0.2, exaggeration: 1.0, ..Camera::default() };
        let rect = coarse.patch_rect(&cam).expect("close up");
        assert_eq!(rect.fine, 1);
        let (w, h) = (160u32, 100u32);
        let mut gpu = GpuTerrain::new(&device, &queue, 1);
        let mut shot = |key: u64, mesh: &Mesh3d, patch: bool| {
            gpu.upload(key, mesh);
            if patch {
                gpu.upload_patch(key, rect, &coarse.patch(&rect).unwrap());
            }
            gpu.render(key, &cam, [w, h]).unwrap();
            gpu.read_pixels().unwrap().1
        };
        let reference = shot(1, &full, false);
        let plain = shot(2, &coarse, false);
        let patched = shot(3, &coarse, true);
        assert_eq!(gpu.patch_info().map(|(k, r, _)| (k, r)), Some((3, rect)));
        // Mean colour difference to the full-resolution mesh over the lower two thirds of the
        // image (the ground near the target, inside the patch).
        let diff = |img: &[u8]| {
            let rows = (h / 3 * w * 4) as usize..img.len();
            let d: u64 = img[rows.clone()]
                .iter()
                .zip(&reference[rows.clone()])
                .map(|(a, b)| a.abs_diff(*b) as u64)
                .sum();
            d as f64 / rows.len() as f64
        };
        // (Colour units: flat ground is drawn at its palette colour, so differences are up to
        // 1 / 0.75 larger than under the old ambient-0.3 light, whose bound was 1.0.)
        let (d_plain, d_patched) = (diff(&plain), diff(&patched));
        assert!(d_patched * 4.0 < d_plain && d_patched < 1.35, "patched {d_patched:.3}, coarse {d_plain:.3}");
    }
}
