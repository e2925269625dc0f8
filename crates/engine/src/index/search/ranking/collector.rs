//! The one id-collecting tantivy collector: per segment, the documents a query matches with
//! their internal ids (the `iid` fast field), in document order, unscored. Ranking reads the
//! positions of exactly these documents; other searches keep only the ids.

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::{DocId, Score, SegmentReader};

use crate::index::open::IID_FIELD;
use crate::index::Index;

/// Collects, per segment, the documents matching a query with their internal ids, in
/// document order. The index lends its opened id columns.
pub(crate) struct LevelDocs<'a>(pub &'a Index);

pub(crate) struct LevelDocsSegment {
    segment: u32,
    iids: tantivy::columnar::Column<u64>,
    out: Vec<(DocId, u32)>,
}

impl Collector for LevelDocs<'_> {
    type Fruit = Vec<(u32, Vec<(DocId, u32)>)>;
    type Child = LevelDocsSegment;

    fn for_segment(
        &self,
        segment: u32,
        reader: &SegmentReader,
    ) -> tantivy::Result<LevelDocsSegment> {
        Ok(LevelDocsSegment {
            segment,
            iids: self.0.segment_column(reader, IID_FIELD)?,
            out: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<(u32, Vec<(DocId, u32)>)>) -> tantivy::Result<Self::Fruit> {
        Ok(fruits)
    }
}

impl SegmentCollector for LevelDocsSegment {
    type Fruit = (u32, Vec<(DocId, u32)>);

    fn collect(&mut self, doc: DocId, _: Score) {
        if let Some(v) = self.iids.first(doc) {
            self.out.push((doc, v as u32));
        }
    }

    fn harvest(self) -> Self::Fruit {
        (self.segment, self.out)
    }
}
