//! Geography functions. A GEOGRAPHY value is WKT text on the wire, a [`geo_types::Geometry`]
//! while computed on ([`value`]). The georust crates do what they do as BigQuery does: `wkt`,
//! `wkb` and `geojson` read the formats, `wkb` writes WKB, `geo`'s haversine gives distances
//! and lengths on S2's Earth radius. BigQuery computes on the sphere with S2, where edges
//! are great-circle arcs, so what `geo` computes on the plane (predicates, centroids, hulls,
//! overlays, simplification) is computed here on the unit sphere instead ([`sphere`],
//! [`parts`]), and WKT and GeoJSON are written in BigQuery's own number format. What is not
//! served (buffers of lines and polygons, overlays of lines, measures on the spheroid) is
//! refused by name rather than given planar answers.
//!
//! The files follow the groups of BigQuery's geography function reference: constructors,
//! parsers, formatters, transformations (with `buffer`, `centroid`, `overlay` and
//! `simplify` apart), accessors, predicates and measures; `rows` is how a function is
//! made of a function of one row, `tessellate` the vertices GeoJSON adds along long edges.
//! This file makes each function's UDF, for the registry in [`super`]: a new function is its
//! computation in the file of its group, its UDF here and its line in the registry.

mod accessors;
mod bbox;
mod buffer;
mod centroid;
mod constructors;
mod formatters;
mod lines;
mod measures;
mod overlay;
mod parsers;
mod parts;
mod predicates;
mod rows;
mod simplify;
mod sphere;
mod tessellate;
mod transformations;
mod value;

use datafusion::arrow::array::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::logical_expr::ScalarUDF;

use geo::HasDimensions;

use self::rows::{PointPair, geo_list, two_points, udf, unary};
use self::value::{Geo, Geography};

pub(crate) use self::transformations::st_union_agg;
use super::registry::{Family, Function};

fn geography() -> DataType {
    DataType::Utf8
}

fn one() -> Vec<Vec<DataType>> {
    vec![vec![geography()]]
}

fn pair() -> Vec<Vec<DataType>> {
    vec![vec![geography(), geography()]]
}

// Constructors.

pub(crate) fn st_geogpoint() -> ScalarUDF {
    constructors::st_geogpoint()
}

pub(crate) fn st_makeline() -> ScalarUDF {
    udf(
        "st_makeline",
        vec![vec![geography(), geography()], vec![geo_list()]],
        geography(),
        constructors::st_makeline,
    )
}

pub(crate) fn st_makepolygon() -> ScalarUDF {
    udf(
        "st_makepolygon",
        vec![vec![geography()], vec![geography(), geo_list()]],
        geography(),
        constructors::st_makepolygon,
    )
}

pub(crate) fn st_makepolygonoriented() -> ScalarUDF {
    udf(
        "st_makepolygonoriented",
        vec![vec![geo_list()]],
        geography(),
        constructors::st_makepolygonoriented,
    )
}

// Parsers.

/// An input type followed by up to `options` BOOLs.
fn with_options(input: DataType, options: usize) -> Vec<Vec<DataType>> {
    (0..=options)
        .map(|k| {
            let mut v = vec![input.clone()];
            v.extend(std::iter::repeat_n(DataType::Boolean, k));
            v
        })
        .collect()
}

pub(crate) fn st_geogfromtext() -> ScalarUDF {
    udf(
        "st_geogfromtext",
        with_options(DataType::Utf8, 3),
        geography(),
        parsers::st_geogfromtext,
    )
}

pub(crate) fn st_geogfromgeojson() -> ScalarUDF {
    udf(
        "st_geogfromgeojson",
        with_options(DataType::Utf8, 1),
        geography(),
        parsers::st_geogfromgeojson,
    )
}

pub(crate) fn st_geogfromwkb() -> ScalarUDF {
    let mut inputs = with_options(DataType::Binary, 3);
    inputs.extend(with_options(geography(), 3));
    udf(
        "st_geogfromwkb",
        inputs,
        geography(),
        parsers::st_geogfromwkb,
    )
}

// Formatters.

pub(crate) fn st_astext() -> ScalarUDF {
    unary!("st_astext", DataType::Utf8, StringBuilder, Geo::wkt)
}

pub(crate) fn st_asgeojson() -> ScalarUDF {
    unary!(
        "st_asgeojson",
        DataType::Utf8,
        StringBuilder,
        |g: &Geo| format!("{} ", tessellate::densified(g).geojson())
    )
}

pub(crate) fn st_asbinary() -> ScalarUDF {
    udf(
        "st_asbinary",
        one(),
        DataType::Binary,
        formatters::st_asbinary,
    )
}

// Transformations.

pub(crate) fn st_boundary() -> ScalarUDF {
    udf(
        "st_boundary",
        one(),
        geography(),
        transformations::st_boundary,
    )
}

pub(crate) fn st_buffer() -> ScalarUDF {
    let (g, x, i) = (geography(), DataType::Float64, DataType::Int64);
    udf(
        "st_buffer",
        vec![
            vec![g.clone(), x.clone()],
            vec![g.clone(), i.clone()],
            vec![g.clone(), x.clone(), i.clone()],
            vec![g.clone(), x.clone(), x.clone()],
            vec![g.clone(), i.clone(), i.clone()],
            vec![g, i, x],
        ],
        geography(),
        buffer::st_buffer,
    )
}

pub(crate) fn st_centroid() -> ScalarUDF {
    udf("st_centroid", one(), geography(), centroid::st_centroid)
}

pub(crate) fn st_closestpoint() -> ScalarUDF {
    udf(
        "st_closestpoint",
        pair(),
        geography(),
        transformations::st_closestpoint,
    )
}

pub(crate) fn st_convexhull() -> ScalarUDF {
    udf(
        "st_convexhull",
        one(),
        geography(),
        transformations::st_convexhull,
    )
}

pub(crate) fn st_difference() -> ScalarUDF {
    udf("st_difference", pair(), geography(), overlay::st_difference)
}

pub(crate) fn st_intersection() -> ScalarUDF {
    udf(
        "st_intersection",
        pair(),
        geography(),
        overlay::st_intersection,
    )
}

pub(crate) fn st_simplify() -> ScalarUDF {
    udf(
        "st_simplify",
        vec![
            vec![geography(), DataType::Float64],
            vec![geography(), DataType::Int64],
        ],
        geography(),
        simplify::st_simplify,
    )
}

pub(crate) fn st_snaptogrid() -> ScalarUDF {
    udf(
        "st_snaptogrid",
        vec![vec![geography(), DataType::Float64]],
        geography(),
        transformations::st_snaptogrid,
    )
}

pub(crate) fn st_union() -> ScalarUDF {
    udf(
        "st_union",
        vec![vec![geography(), geography()], vec![geo_list()]],
        geography(),
        transformations::st_union,
    )
}

// Accessors.

pub(crate) fn st_dimension() -> ScalarUDF {
    unary!(
        "st_dimension",
        DataType::Int64,
        Int64Builder,
        Geo::dimension
    )
}

pub(crate) fn st_dump() -> ScalarUDF {
    udf("bigq_st_dump", one(), geo_list(), accessors::st_dump)
}

/// `ST_DUMP(g[, dimension])` as the UDF of its arity.
fn st_dump_call(
    _: &str,
    f: &datafusion::sql::sqlparser::ast::Function,
) -> crate::error::BqResult<Option<datafusion::sql::sqlparser::ast::Expr>> {
    let Some(args) = crate::sql::ast::function_args(f) else {
        return Ok(None);
    };
    let name = if args.len() == 2 {
        "bigq_st_dump_dimension"
    } else {
        "bigq_st_dump"
    };
    Ok(Some(crate::sql::ast::call(name, args)))
}

pub(crate) fn st_dump_dimension() -> ScalarUDF {
    udf(
        "bigq_st_dump_dimension",
        vec![vec![geography(), DataType::Int64]],
        geo_list(),
        accessors::st_dump_dimension,
    )
}

pub(crate) fn st_exteriorring() -> ScalarUDF {
    udf(
        "st_exteriorring",
        one(),
        geography(),
        accessors::st_exteriorring,
    )
}

pub(crate) fn st_interiorrings() -> ScalarUDF {
    udf(
        "st_interiorrings",
        one(),
        geo_list(),
        accessors::st_interiorrings,
    )
}

pub(crate) fn st_numgeometries() -> ScalarUDF {
    unary!(
        "st_numgeometries",
        DataType::Int64,
        Int64Builder,
        |g: &Geo| { if g.is_empty() { 0 } else { g.parts() as i64 } }
    )
}

pub(crate) fn st_geogfrom() -> ScalarUDF {
    udf(
        "st_geogfrom",
        vec![vec![DataType::Binary], vec![DataType::Utf8]],
        geography(),
        parsers::st_geogfrom,
    )
}

pub(crate) fn st_geogpointfromgeohash() -> ScalarUDF {
    udf(
        "st_geogpointfromgeohash",
        vec![vec![DataType::Utf8]],
        geography(),
        parsers::st_geogpointfromgeohash,
    )
}

pub(crate) fn st_geohash() -> ScalarUDF {
    udf(
        "st_geohash",
        vec![vec![geography()], vec![geography(), DataType::Int64]],
        DataType::Utf8,
        formatters::st_geohash,
    )
}

pub(crate) fn st_azimuth() -> ScalarUDF {
    udf(
        "st_azimuth",
        pair(),
        DataType::Float64,
        measures::st_azimuth,
    )
}

pub(crate) fn st_angle() -> ScalarUDF {
    udf(
        "st_angle",
        vec![vec![geography(), geography(), geography()]],
        DataType::Float64,
        measures::st_angle,
    )
}

pub(crate) fn st_lineinterpolatepoint() -> ScalarUDF {
    udf(
        "st_lineinterpolatepoint",
        vec![vec![geography(), DataType::Float64]],
        geography(),
        lines::st_lineinterpolatepoint,
    )
}

pub(crate) fn st_linelocatepoint() -> ScalarUDF {
    udf(
        "st_linelocatepoint",
        pair(),
        DataType::Float64,
        lines::st_linelocatepoint,
    )
}

pub(crate) fn st_linesubstring() -> ScalarUDF {
    udf(
        "st_linesubstring",
        vec![vec![geography(), DataType::Float64, DataType::Float64]],
        geography(),
        lines::st_linesubstring,
    )
}

pub(crate) fn st_endpoint() -> ScalarUDF {
    udf("st_endpoint", one(), geography(), accessors::st_endpoint)
}

pub(crate) fn st_geometrytype() -> ScalarUDF {
    unary!(
        "st_geometrytype",
        DataType::Utf8,
        StringBuilder,
        Geo::type_name
    )
}

pub(crate) fn st_isclosed() -> ScalarUDF {
    udf(
        "st_isclosed",
        one(),
        DataType::Boolean,
        accessors::st_isclosed,
    )
}

pub(crate) fn st_iscollection() -> ScalarUDF {
    unary!(
        "st_iscollection",
        DataType::Boolean,
        BooleanBuilder,
        |g: &Geo| g.parts() > 1
    )
}

pub(crate) fn st_isempty() -> ScalarUDF {
    unary!(
        "st_isempty",
        DataType::Boolean,
        BooleanBuilder,
        Geo::is_empty
    )
}

pub(crate) fn st_isring() -> ScalarUDF {
    udf("st_isring", one(), DataType::Boolean, accessors::st_isring)
}

pub(crate) fn st_npoints() -> ScalarUDF {
    unary!("st_npoints", DataType::Int64, Int64Builder, Geo::points)
}

pub(crate) fn st_numpoints() -> ScalarUDF {
    unary!("st_numpoints", DataType::Int64, Int64Builder, Geo::points)
}

pub(crate) fn st_pointn() -> ScalarUDF {
    udf(
        "st_pointn",
        vec![vec![geography(), DataType::Int64]],
        geography(),
        accessors::st_pointn,
    )
}

pub(crate) fn st_startpoint() -> ScalarUDF {
    udf(
        "st_startpoint",
        one(),
        geography(),
        accessors::st_startpoint,
    )
}

pub(crate) fn st_x() -> ScalarUDF {
    udf("st_x", one(), DataType::Float64, accessors::st_x)
}

pub(crate) fn st_y() -> ScalarUDF {
    udf("st_y", one(), DataType::Float64, accessors::st_y)
}

// Predicates.

pub(crate) fn st_contains() -> ScalarUDF {
    udf(
        "st_contains",
        pair(),
        DataType::Boolean,
        predicates::st_contains,
    )
}

pub(crate) fn st_coveredby() -> ScalarUDF {
    udf(
        "st_coveredby",
        pair(),
        DataType::Boolean,
        predicates::st_coveredby,
    )
}

pub(crate) fn st_covers() -> ScalarUDF {
    udf(
        "st_covers",
        pair(),
        DataType::Boolean,
        predicates::st_covers,
    )
}

pub(crate) fn st_disjoint() -> ScalarUDF {
    udf(
        "st_disjoint",
        pair(),
        DataType::Boolean,
        predicates::st_disjoint,
    )
}

pub(crate) fn st_dwithin() -> ScalarUDF {
    two_points("st_dwithin", PointPair::Within)
}

pub(crate) fn st_equals() -> ScalarUDF {
    two_points("st_equals", PointPair::Same)
}

pub(crate) fn st_intersects() -> ScalarUDF {
    udf(
        "st_intersects",
        pair(),
        DataType::Boolean,
        predicates::st_intersects,
    )
}

pub(crate) fn st_intersectsbox() -> ScalarUDF {
    predicates::st_intersectsbox()
}

pub(crate) fn st_touches() -> ScalarUDF {
    udf(
        "st_touches",
        pair(),
        DataType::Boolean,
        predicates::st_touches,
    )
}

pub(crate) fn st_within() -> ScalarUDF {
    udf(
        "st_within",
        pair(),
        DataType::Boolean,
        predicates::st_within,
    )
}

// Measures.

pub(crate) fn st_area() -> ScalarUDF {
    udf(
        "st_area",
        vec![vec![geography()], vec![geography(), DataType::Boolean]],
        DataType::Float64,
        measures::st_area,
    )
}

pub(crate) fn st_distance() -> ScalarUDF {
    two_points("st_distance", PointPair::Distance)
}

pub(crate) fn st_length() -> ScalarUDF {
    unary!("st_length", DataType::Float64, Float64Builder, Geo::length)
}

pub(crate) fn st_maxdistance() -> ScalarUDF {
    udf(
        "st_maxdistance",
        pair(),
        DataType::Float64,
        measures::st_maxdistance,
    )
}

pub(crate) fn st_perimeter() -> ScalarUDF {
    udf(
        "st_perimeter",
        vec![vec![geography()], vec![geography(), DataType::Boolean]],
        DataType::Float64,
        measures::st_perimeter,
    )
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Geography, &["ST_ANGLE(GEOGRAPHY, GEOGRAPHY, GEOGRAPHY) -> FLOAT64"], st_angle),
    Function::udf(Family::Geography, &["ST_AREA(GEOGRAPHY[, BOOL]) -> FLOAT64"], st_area),
    Function::udf(Family::Geography, &["ST_ASBINARY(GEOGRAPHY) -> BYTES"], st_asbinary),
    Function::udf(Family::Geography, &["ST_ASGEOJSON(GEOGRAPHY) -> STRING"], st_asgeojson),
    Function::udf(Family::Geography, &["ST_ASTEXT(GEOGRAPHY) -> STRING"], st_astext),
    Function::udf(Family::Geography, &["ST_AZIMUTH(GEOGRAPHY, GEOGRAPHY) -> FLOAT64"], st_azimuth),
    Function::udf(Family::Geography, &["ST_BOUNDARY(GEOGRAPHY) -> GEOGRAPHY"], st_boundary),
    Function::udf(Family::Geography, &["ST_BOUNDINGBOX(GEOGRAPHY) -> STRUCT<xmin FLOAT64, ymin FLOAT64, xmax FLOAT64, ymax FLOAT64>"],
        bbox::st_boundingbox),
    Function::udf(Family::Geography, &["ST_BUFFER(GEOGRAPHY, FLOAT64[, INT64]) -> GEOGRAPHY", "ST_BUFFER(GEOGRAPHY, INT64[, INT64]) -> GEOGRAPHY",
        "ST_BUFFER(GEOGRAPHY, FLOAT64, FLOAT64) -> GEOGRAPHY", "ST_BUFFER(GEOGRAPHY, INT64, FLOAT64) -> GEOGRAPHY"],
        st_buffer),
    Function::udf(Family::Geography, &["ST_CENTROID(GEOGRAPHY) -> GEOGRAPHY"], st_centroid),
    Function::udf(Family::Geography, &["ST_CLOSESTPOINT(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY"], st_closestpoint),
    Function::udf(Family::Geography, &["ST_CONTAINS(GEOGRAPHY, GEOGRAPHY) -> BOOL"], st_contains),
    Function::udf(Family::Geography, &["ST_CONVEXHULL(GEOGRAPHY) -> GEOGRAPHY"], st_convexhull),
    Function::udf(Family::Geography, &["ST_COVEREDBY(GEOGRAPHY, GEOGRAPHY) -> BOOL"], st_coveredby),
    Function::udf(Family::Geography, &["ST_COVERS(GEOGRAPHY, GEOGRAPHY) -> BOOL"], st_covers),
    Function::udf(Family::Geography, &["ST_DIFFERENCE(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY"], st_difference),
    Function::udf(Family::Geography, &["ST_DIMENSION(GEOGRAPHY) -> INT64"], st_dimension),
    Function::udf(Family::Geography, &["ST_DISJOINT(GEOGRAPHY, GEOGRAPHY) -> BOOL"], st_disjoint),
    Function::udf(Family::Geography, &["ST_DISTANCE(GEOGRAPHY, GEOGRAPHY) -> FLOAT64"], st_distance),
    Function::rewrite(Family::Geography, &["ST_DUMP(GEOGRAPHY[, INT64]) -> ARRAY<GEOGRAPHY>"], st_dump_call),
    Function::udf(Family::Geography, &["bigq_st_dump(GEOGRAPHY) -> ARRAY<GEOGRAPHY>"], st_dump),
    Function::udf(Family::Geography, &["bigq_st_dump_dimension(GEOGRAPHY, INT64) -> ARRAY<GEOGRAPHY>"], st_dump_dimension),
    Function::udf(Family::Geography, &["ST_DWITHIN(GEOGRAPHY, GEOGRAPHY, FLOAT64) -> BOOL"], st_dwithin),
    Function::udf(Family::Geography, &["ST_ENDPOINT(GEOGRAPHY) -> GEOGRAPHY"], st_endpoint),
    Function::udf(Family::Geography, &["ST_EQUALS(GEOGRAPHY, GEOGRAPHY) -> BOOL"], st_equals),
    Function::rewrite(Family::Geography, &["ST_EXTENT(GEOGRAPHY) -> STRUCT<xmin FLOAT64, ymin FLOAT64, xmax FLOAT64, ymax FLOAT64>"],
        bbox::st_extent),
    Function::udf(Family::Geography, &["bigq_st_extent(ARRAY<GEOGRAPHY>) -> STRUCT<xmin FLOAT64, ymin FLOAT64, xmax FLOAT64, ymax FLOAT64>"],
        bbox::st_extent_of),
    Function::udf(Family::Geography, &["ST_EXTERIORRING(GEOGRAPHY) -> GEOGRAPHY"], st_exteriorring),
    Function::udf(Family::Geography, &["ST_GEOGFROM(STRING) -> GEOGRAPHY", "ST_GEOGFROM(BYTES) -> GEOGRAPHY"], st_geogfrom),
    Function::udf(Family::Geography, &["ST_GEOGFROMGEOJSON(STRING[, BOOL]) -> GEOGRAPHY"], st_geogfromgeojson),
    Function::udf(Family::Geography, &["ST_GEOGFROMTEXT(STRING[, BOOL]) -> GEOGRAPHY",
        "ST_GEOGFROMTEXT(STRING, BOOL, BOOL[, BOOL]) -> GEOGRAPHY"], st_geogfromtext),
    Function::udf(Family::Geography, &["ST_GEOGFROMWKB(BYTES[, BOOL]) -> GEOGRAPHY",
        "ST_GEOGFROMWKB(BYTES, BOOL, BOOL[, BOOL]) -> GEOGRAPHY", "ST_GEOGFROMWKB(STRING[, BOOL]) -> GEOGRAPHY",
        "ST_GEOGFROMWKB(STRING, BOOL, BOOL[, BOOL]) -> GEOGRAPHY"],
        st_geogfromwkb),
    Function::udf(Family::Geography, &["ST_GEOGPOINT(FLOAT64, FLOAT64) -> GEOGRAPHY"], st_geogpoint),
    Function::udf(Family::Geography, &["ST_GEOGPOINTFROMGEOHASH(STRING) -> GEOGRAPHY"], st_geogpointfromgeohash),
    Function::udf(Family::Geography, &["ST_GEOHASH(GEOGRAPHY[, INT64]) -> STRING"], st_geohash),
    Function::udf(Family::Geography, &["ST_GEOMETRYTYPE(GEOGRAPHY) -> STRING"], st_geometrytype),
    Function::udf(Family::Geography, &["ST_INTERIORRINGS(GEOGRAPHY) -> ARRAY<GEOGRAPHY>"], st_interiorrings),
    Function::udf(Family::Geography, &["ST_INTERSECTION(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY"], st_intersection),
    Function::udf(Family::Geography, &["ST_INTERSECTS(GEOGRAPHY, GEOGRAPHY) -> BOOL"], st_intersects),
    Function::udf(Family::Geography, &["ST_INTERSECTSBOX(GEOGRAPHY, FLOAT64, FLOAT64, FLOAT64, FLOAT64) -> BOOL"],
        st_intersectsbox),
    Function::udf(Family::Geography, &["ST_ISCLOSED(GEOGRAPHY) -> BOOL"], st_isclosed),
    Function::udf(Family::Geography, &["ST_ISCOLLECTION(GEOGRAPHY) -> BOOL"], st_iscollection),
    Function::udf(Family::Geography, &["ST_ISEMPTY(GEOGRAPHY) -> BOOL"], st_isempty),
    Function::udf(Family::Geography, &["ST_ISRING(GEOGRAPHY) -> BOOL"], st_isring),
    Function::udf(Family::Geography, &["ST_LENGTH(GEOGRAPHY) -> FLOAT64"], st_length),
    Function::udf(Family::Geography, &["ST_LINEINTERPOLATEPOINT(GEOGRAPHY, FLOAT64) -> GEOGRAPHY"], st_lineinterpolatepoint),
    Function::udf(Family::Geography, &["ST_LINELOCATEPOINT(GEOGRAPHY, GEOGRAPHY) -> FLOAT64"], st_linelocatepoint),
    Function::udf(Family::Geography, &["ST_LINESUBSTRING(GEOGRAPHY, FLOAT64, FLOAT64) -> GEOGRAPHY"], st_linesubstring),
    Function::udf(Family::Geography, &["ST_MAKELINE(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY",
        "ST_MAKELINE(ARRAY<GEOGRAPHY>) -> GEOGRAPHY"],
        st_makeline),
    Function::udf(Family::Geography, &["ST_MAKEPOLYGON(GEOGRAPHY[, ARRAY<GEOGRAPHY>]) -> GEOGRAPHY"], st_makepolygon),
    Function::udf(Family::Geography, &["ST_MAKEPOLYGONORIENTED(ARRAY<GEOGRAPHY>) -> GEOGRAPHY"],
        st_makepolygonoriented),
    Function::udf(Family::Geography, &["ST_MAXDISTANCE(GEOGRAPHY, GEOGRAPHY) -> FLOAT64"], st_maxdistance),
    Function::udf(Family::Geography, &["ST_NPOINTS(GEOGRAPHY) -> INT64"], st_npoints),
    Function::udf(Family::Geography, &["ST_NUMGEOMETRIES(GEOGRAPHY) -> INT64"], st_numgeometries),
    Function::udf(Family::Geography, &["ST_NUMPOINTS(GEOGRAPHY) -> INT64"], st_numpoints),
    Function::udf(Family::Geography, &["ST_PERIMETER(GEOGRAPHY[, BOOL]) -> FLOAT64"], st_perimeter),
    Function::udf(Family::Geography, &["ST_POINTN(GEOGRAPHY, INT64) -> GEOGRAPHY"], st_pointn),
    Function::udf(Family::Geography, &["ST_SIMPLIFY(GEOGRAPHY, FLOAT64) -> GEOGRAPHY",
        "ST_SIMPLIFY(GEOGRAPHY, INT64) -> GEOGRAPHY"],
        st_simplify),
    Function::udf(Family::Geography, &["ST_SNAPTOGRID(GEOGRAPHY, FLOAT64) -> GEOGRAPHY"], st_snaptogrid),
    Function::udf(Family::Geography, &["ST_STARTPOINT(GEOGRAPHY) -> GEOGRAPHY"], st_startpoint),
    Function::udf(Family::Geography, &["ST_TOUCHES(GEOGRAPHY, GEOGRAPHY) -> BOOL"], st_touches),
    Function::udf(Family::Geography, &["ST_UNION(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY", "ST_UNION(ARRAY<GEOGRAPHY>) -> GEOGRAPHY"],
        st_union),
    Function::rewrite(Family::Geography, &["ST_UNION_AGG(GEOGRAPHY) -> GEOGRAPHY"], st_union_agg),
    Function::udf(Family::Geography, &["ST_WITHIN(GEOGRAPHY, GEOGRAPHY) -> BOOL"], st_within),
    Function::udf(Family::Geography, &["ST_X(GEOGRAPHY) -> FLOAT64"], st_x),
    Function::udf(Family::Geography, &["ST_Y(GEOGRAPHY) -> FLOAT64"], st_y),
];
