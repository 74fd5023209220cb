//! Reading a screenshot: PNG decoding and colour classes by hue, so the
//! shading of a lit surface does not matter.

pub struct Image {
    pub width: u32,
    pub height: u32,
    rgb: Vec<[u8; 3]>,
}

impl Image {
    pub fn from_png(bytes: &[u8]) -> Image {
        let decoder = png::Decoder::new(bytes);
        let mut reader = decoder.read_info().expect("PNG header");
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).expect("PNG frame");
        let channels = match info.color_type {
            png::ColorType::Rgb => 3,
            png::ColorType::Rgba => 4,
            other => panic!("unexpected PNG colour type {other:?}"),
        };
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        let rgb = buf[..info.buffer_size()]
            .chunks(channels)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        Image {
            width: info.width,
            height: info.height,
            rgb,
        }
    }

    pub fn pixel(&self, x: i64, y: i64) -> Option<[u8; 3]> {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return None;
        }
        self.rgb
            .get((y as usize) * self.width as usize + x as usize)
            .copied()
    }

    /// Pixels of class `c` within `radius` of (x, y).
    pub fn count_near(&self, x: f64, y: f64, radius: i64, c: Class) -> usize {
        let (cx, cy) = (x.round() as i64, y.round() as i64);
        let mut n = 0;
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                if let Some(p) = self.pixel(cx + dx, cy + dy) {
                    if classify(p) == c {
                        n += 1;
                    }
                }
            }
        }
        n
    }

    /// The classes found within `radius` of (x, y), for failure messages.
    pub fn describe_near(&self, x: f64, y: f64, radius: i64) -> String {
        let (cx, cy) = (x.round() as i64, y.round() as i64);
        let mut out = String::new();
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                if let Some(p) = self.pixel(cx + dx, cy + dy) {
                    out.push_str(&format!("{:?}{:?} ", classify(p), p));
                }
            }
            out.push('\n');
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Left team (blue).
    Left,
    /// Right team (red).
    Right,
    /// The ball (orange).
    Ball,
    /// Grass.
    Grass,
    /// A field line (white).
    Line,
    Other,
}

/// Colour class of one pixel by hue, saturation and value.
pub fn classify([r, g, b]: [u8; 3]) -> Class {
    let (r, g, b) = (f32::from(r), f32::from(g), f32::from(b));
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let v = max / 255.0;
    let s = if max > 0.0 { (max - min) / max } else { 0.0 };
    if s < 0.12 && v > 0.8 {
        return Class::Line;
    }
    if s < 0.45 || v < 0.2 {
        return Class::Other;
    }
    let d = max - min;
    let mut h = if max == r {
        60.0 * ((g - b) / d)
    } else if max == g {
        60.0 * ((b - r) / d + 2.0)
    } else {
        60.0 * ((r - g) / d + 4.0)
    };
    if h < 0.0 {
        h += 360.0;
    }
    match h {
        h if !(12.0..=345.0).contains(&h) => Class::Right,
        h if (20.0..=45.0).contains(&h) => Class::Ball,
        h if (95.0..=150.0).contains(&h) => Class::Grass,
        h if (205.0..=240.0).contains(&h) => Class::Left,
        _ => Class::Other,
    }
}

#[test]
fn colour_classes_of_the_page_palette() {
    // Base colours of render.js at the light levels the shader gives.
    for k in [0.55f32, 0.8, 1.0] {
        let c = |rgb: [f32; 3]| {
            let f = |x: f32| (x * k * 255.0).round() as u8;
            [f(rgb[0]), f(rgb[1]), f(rgb[2])]
        };
        assert_eq!(classify(c([0.16, 0.36, 0.92])), Class::Left);
        assert_eq!(classify(c([0.92, 0.16, 0.12])), Class::Right);
        assert_eq!(classify(c([1.0, 0.5, 0.0])), Class::Ball);
        assert_eq!(classify(c([0.18, 0.55, 0.22])), Class::Grass);
    }
    assert_eq!(classify([243, 243, 243]), Class::Line);
    assert_eq!(classify([140, 178, 217]), Class::Other); // sky
}
