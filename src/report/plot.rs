//! Line charts of a campaign's time series, as PNG files (plotters' bitmap backend).
//!
//! Text needs a TrueType font: DejaVu Sans from `fonts-dejavu-core` (installed by
//! `scripts/setup.sh`), or the file named by `DLCFUZZ_FONT`.

use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

const FONT_PATH: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// Registers the font once; the error names what is missing.
fn font() -> Result<(), String> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let path = std::env::var("DLCFUZZ_FONT").unwrap_or_else(|_| FONT_PATH.to_string());
        let bytes = std::fs::read(&path).map_err(|e| {
            format!(
                "no TrueType font at {path} ({e}): install fonts-dejavu-core or set DLCFUZZ_FONT"
            )
        })?;
        plotters::style::register_font("sans-serif", FontStyle::Normal, Box::leak(bytes.into()))
            .map_err(|_| format!("{path} is not a usable font"))
    })
    .clone()
}

/// One named series of (seconds, value) points.
pub struct Series<'a> {
    /// Legend label.
    pub label: &'a str,
    /// The points, in time order.
    pub points: Vec<(f64, f64)>,
}

/// Draws `series` against time into a 900×500 PNG at `path`.
pub fn line_chart(
    path: &Path,
    title: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    font()?;
    let err = |e: &dyn std::fmt::Display| format!("plotting {}: {e}", path.display());
    let x_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let y_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.1;
    let root = BitMapBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 24))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc(y_label)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(s.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
