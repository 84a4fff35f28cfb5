// terrasynth 3D view (see view3d/mod.rs for the lighting and projection, view3d_gpu.rs for the passes).

struct Uniforms {
    // Column-major view-projection matrix (Camera::view_proj).
    view_proj: mat4x4<f32>,
    // xyz: unit vector towards the sun; w: vertical exaggeration.
    light: vec4<f32>,
    // x, y: half extents of the map; z: sea level Z (exaggerated); w: water opacity.
    water: vec4<f32>,
    // rgb: water colour (sRGB, 0..1); w: ambient light fraction.
    water_color: vec4<f32>,
    // Sky colour at the top and bottom of the image (sRGB, 0..1).
    sky_top: vec4<f32>,
    sky_bottom: vec4<f32>,
};

@group(0) @binding(0) var<uniform> u: Uniforms;

struct TerrainOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec3<f32>,
};

@vertex
fn vs_terrain(
    @location(0) pos: vec3<f32>,
    @location(1) grad: vec2<f32>,
    @location(2) color: vec4<f32>,
) -> TerrainOut {
    let e = u.light.w;
    var out: TerrainOut;
    out.clip = u.view_proj * vec4<f32>(pos.xy, pos.z * e, 1.0);
    let n = normalize(vec3<f32>(-grad.x * e, -grad.y * e, 1.0));
    let ambient = u.water_color.w;
    // The library's hillshade light factor: 1 on flat ground, `ambient` facing away.
    let lit = ambient + (1.0 - ambient) * max(dot(n, u.light.xyz), 0.0) / u.light.z;
    out.color = color.rgb * lit;
    return out;
}

@fragment
fn fs_terrain(in: TerrainOut) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color, 1.0);
}

// Water: the map rectangle at sea level, a 4-vertex triangle strip.
@vertex
fn vs_water(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let corner = vec2<f32>(f32(i & 1u) * 2.0 - 1.0, f32((i >> 1u) & 1u) * 2.0 - 1.0);
    return u.view_proj * vec4<f32>(corner * u.water.xy, u.water.z, 1.0);
}

@fragment
fn fs_water() -> @location(0) vec4<f32> {
    return vec4<f32>(u.water_color.rgb, u.water.w);
}

// Sky: one triangle covering the screen, gradient from top to bottom.
struct SkyOut {
    @builtin(position) pos: vec4<f32>,
    @location(0) t: f32,
};

@vertex
fn vs_sky(@builtin(vertex_index) i: u32) -> SkyOut {
    let x = f32(i / 2u) * 4.0 - 1.0;
    let y = f32(i & 1u) * 4.0 - 1.0;
    var out: SkyOut;
    out.pos = vec4<f32>(x, y, 1.0, 1.0);
    out.t = (1.0 - y) * 0.5;
    return out;
}

@fragment
fn fs_sky(in: SkyOut) -> @location(0) vec4<f32> {
    return mix(u.sky_top, u.sky_bottom, clamp(in.t, 0.0, 1.0));
}
