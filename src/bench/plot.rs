//! Plots of a bench run (plotters; SVG and PNG): total runtime against response size per
//! series, with the reference implementation's figures measured on this machine beside ours,
//! and the per-phase breakdown of every series.

use super::config::RevealRecv;
use super::report::CaseSummary;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Text needs a font file (ab_glyph); Debian's fonts-dejavu-core (installed by setup.sh).
const FONT_PATHS: &[&str] = &["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf"];

/// The reference implementation, run on this machine by the authors (issue #8):
/// (profile, reveal, response KB, median seconds).
pub(crate) const REFERENCE: &[(&str, RevealRecv, f64, f64)] = &[
    ("local", RevealRecv::All, 1.0, 0.21),
    ("local", RevealRecv::All, 51.0, 0.21),
    ("local", RevealRecv::AllButLast, 1.0, 0.41),
    ("local", RevealRecv::AllButLast, 51.0, 12.3),
    ("cable", RevealRecv::All, 1.0, 1.15),
    ("cable", RevealRecv::All, 51.0, 1.16),
    ("cable", RevealRecv::AllButLast, 1.0, 1.63),
    ("cable", RevealRecv::AllButLast, 51.0, 16.3),
];

type PlotResult = Result<(), Box<dyn std::error::Error>>;

fn register_font() -> Result<(), String> {
    static FONT: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    FONT.get_or_init(|| {
        let bytes = FONT_PATHS
            .iter()
            .find_map(|p| std::fs::read(p).ok())
            .ok_or_else(|| format!("no font for the plots at {FONT_PATHS:?} (apt install fonts-dejavu-core)"))?;
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .map_err(|_| "the plot font is unreadable".to_string())
    })
    .clone()
}

/// A line of the runtime plot: (label, profile, reveal, points (KB, s)).
struct Series {
    label: String,
    profile: String,
    reveal: RevealRecv,
    points: Vec<(f64, f64)>,
    phases: [Vec<(f64, f64)>; 4],
}

fn series(summaries: &[CaseSummary]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for s in summaries {
        let label = s.first.series();
        let kb = s.first.download_size as f64 / 1024.0;
        let i = match out.iter().position(|x| x.label == label) {
            Some(i) => i,
            None => {
                out.push(Series {
                    label,
                    profile: s.first.profile.clone(),
                    reveal: s.first.reveal_recv,
                    points: Vec::new(),
                    phases: Default::default(),
                });
                out.len() - 1
            }
        };
        let line = &mut out[i];
        line.points.push((kb, s.time_total));
        for (p, v) in line.phases.iter_mut().zip([s.time_preprocess, s.time_online, s.time_prove, s.time_total]) {
            p.push((kb, v));
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        for p in &mut s.phases {
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    out
}

/// Writes runtime.{svg,png} and breakdown.{svg,png}; returns the file names.
pub(crate) fn write_plots(dir: &Path, summaries: &[CaseSummary]) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    register_font()?;
    let lines = series(summaries);
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    let (w, h) = (1000u32, 620u32);
    runtime(SVGBackend::new(&dir.join("runtime.svg"), (w, h)).into_drawing_area(), &lines)?;
    runtime(BitMapBackend::new(&dir.join("runtime.png"), (w, h)).into_drawing_area(), &lines)?;
    let rows = lines.len().div_ceil(2) as u32;
    let (bw, bh) = (1000u32, 330 * rows);
    breakdown(SVGBackend::new(&dir.join("breakdown.svg"), (bw, bh)).into_drawing_area(), &lines)?;
    breakdown(BitMapBackend::new(&dir.join("breakdown.png"), (bw, bh)).into_drawing_area(), &lines)?;
    Ok(["runtime.svg", "runtime.png", "breakdown.svg", "breakdown.png"].map(String::from).to_vec())
}

fn err<E: std::fmt::Debug>(e: E) -> Box<dyn std::error::Error> {
    format!("plot: {e:?}").into()
}

fn runtime<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, lines: &[Series]) -> PlotResult {
    root.fill(&WHITE).map_err(err)?;
    let references: Vec<_> =
        REFERENCE.iter().filter(|r| lines.iter().any(|l| l.profile == r.0 && l.reveal == r.1)).collect();
    let all_y = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).chain(references.iter().map(|r| r.3));
    let (ymin, ymax) = all_y.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    let xmax = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).fold(1.0f64, f64::max) * 1.05;
    let mut chart = ChartBuilder::on(&root)
        .caption("Total runtime vs response size (median; log scale)", ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..xmax, ((ymin * 0.7).max(0.005)..ymax * 1.4).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("response size (KB)")
        .y_desc("total time (s)")
        .y_label_formatter(&|v| format!("{v:.2}"))
        .draw()
        .map_err(err)?;
    for (i, line) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(line.points.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(format!("tlsproof {}", line.label))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(line.points.iter().map(|p| Circle::new(*p, 3, color.filled()))).map_err(err)?;
    }
    for (i, (profile, reveal)) in [
        ("local", RevealRecv::All),
        ("local", RevealRecv::AllButLast),
        ("cable", RevealRecv::All),
        ("cable", RevealRecv::AllButLast),
    ]
    .into_iter()
    .enumerate()
    {
        let pts: Vec<(f64, f64)> =
            references.iter().filter(|r| r.0 == profile && r.1 == reveal).map(|r| (r.2, r.3)).collect();
        if pts.is_empty() {
            continue;
        }
        // The reference in greys, so it never looks like one of ours.
        let color = RGBColor(20 + 40 * i as u8, 20 + 40 * i as u8, 20 + 40 * i as u8).to_rgba();
        let what = if reveal == RevealRecv::All { "reveal all" } else { "redacted" };
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(1)))
            .map_err(err)?
            .label(format!("reference {profile} {what}"))
            .legend(move |(x, y)| Cross::new((x + 10, y), 5, color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|p| Cross::new(*p, 6, color.stroke_width(2)))).map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

fn breakdown<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, lines: &[Series]) -> PlotResult {
    root.fill(&WHITE).map_err(err)?;
    let panels = root.split_evenly((lines.len().div_ceil(2), 2));
    for (line, panel) in lines.iter().zip(panels.iter()) {
        let ymax = line.phases.iter().flatten().map(|p| p.1).fold(0.01f64, f64::max) * 1.15;
        let xmax = line.points.iter().map(|p| p.0).fold(1.0f64, f64::max) * 1.05;
        let mut chart = ChartBuilder::on(panel)
            .caption(format!("phases: {}", line.label), ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d(0f64..xmax, 0f64..ymax)
            .map_err(err)?;
        chart.configure_mesh().x_desc("response (KB)").y_desc("s (median)").draw().map_err(err)?;
        for (i, (name, pts)) in
            ["preprocess (OT)", "online (TLS)", "prove", "total"].iter().zip(&line.phases).enumerate()
        {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(err)?
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
