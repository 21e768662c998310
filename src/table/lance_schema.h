/*
 * lance_schema.h — Lance schema fields (`lance.file.Field`): the in-memory form, the mapping
 * to and from og_type, and the protobuf codec shared by data files (FileDescriptor) and table
 * manifests (Manifest.fields = 1).  Field numbers: docs/lance-format.md.
 *
 * A schema is a flat list of fields in pre-order: a parent comes before its child.  The types
 * OmniGraph stores map to fields like this (og_lance_logical_type):
 *   I32 "int32"  I64 "int64"  U32 "uint32"  U64 "uint64"  F32 "float"  F64 "double"
 *   BOOL "bool"  DATE32 "date32:day"  DATE64 "date64:ms"  STRING "string"  BLOB "large_binary"
 *   VECTOR(N) "fixed_size_list:float:N"  (one field, no child)
 *   LIST<elem> "list" + a child field named "item" (nullable) of the element's type.
 * Each such field is exactly one physical column of a data file, in schema order
 * (og_lance_schema_column_index).
 *
 * Memory: an og_lance_schema owns its fields array and every string / metadata value in it
 * (all heap, freed by og_lance_schema_free).  Functions that take a `const og_lance_field *`
 * to add copy it deeply; the caller keeps its own copy.  Pointers returned by lookups point
 * into the schema and live as long as it is neither freed nor appended to.
 */
#ifndef OG_TABLE_LANCE_SCHEMA_H
#define OG_TABLE_LANCE_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "omnigraph.h"
#include "util/buf.h"
#include "util/vector.h"

/* lance.file.Field.encoding (legacy; ignored by 2.0 readers but always written). */
enum { OG_LANCE_ENC_PLAIN = 1, OG_LANCE_ENC_VAR_BINARY = 2 };

/* Metadata key that marks an unenforced primary key (value "true"). */
#define OG_LANCE_PK_METADATA_KEY "lance-schema:unenforced-primary-key"

typedef struct og_lance_kv {
    char *key;          /* NUL-terminated */
    uint8_t *value;     /* bytes (map<string, bytes>); always NUL-terminated past value_len */
    size_t value_len;
} og_lance_kv;

typedef struct og_lance_field {
    char *name;                 /* NUL-terminated, never NULL in a schema */
    int32_t id;                 /* field id: the only link between manifest and data files */
    int32_t parent_id;          /* -1 for a top-level field */
    char *logical_type;         /* "int64", "list", "fixed_size_list:float:128", ... */
    int nullable;               /* 0 or 1 */
    int32_t encoding;           /* legacy Field.encoding (OG_LANCE_ENC_*); 0 = derive on encode */
    int32_t type;               /* Field.type (0 PARENT, 1 REPEATED, 2 LEAF); we write 0 */
    og_lance_kv *metadata;      /* metadata map, in the order given */
    size_t metadata_count;
    int unenforced_primary_key;             /* Field 12 */
    uint32_t unenforced_primary_key_position; /* Field 13; 0 = absent */
} og_lance_field;

typedef struct og_lance_schema {
    og_lance_field *fields;     /* pre-order */
    size_t count;
    size_t cap;
} og_lance_schema;

#define OG_LANCE_SCHEMA_INIT {NULL, 0, 0}

/* --- building --------------------------------------------------------------------------- */

/* Appends a deep copy of *f.  OG_ERR_NOMEM. */
og_status og_lance_schema_add_field(og_lance_schema *s, const og_lance_field *f);

/* Appends the field(s) for one top-level column of OmniGraph type `type`: one field, or for a
 * LIST the list field (id `id`) and its child "item" (id `child_id`, nullable; child_id is
 * ignored for other types).  `primary_key` sets Field 12 and the PK metadata (and forces
 * nullable = 0).  OG_ERR_INVALID for a type that has no Lance mapping (NULL, a LIST of a
 * non-scalar, a VECTOR of dimension 0). */
og_status og_lance_schema_add_column(og_lance_schema *s, const char *name, og_type type,
                                     int32_t id, int32_t child_id, int nullable, int primary_key);

/* Adds (or replaces) one metadata entry of a field (copies key and value). */
og_status og_lance_field_set_metadata(og_lance_field *f, const char *key, const void *value,
                                      size_t value_len);
/* The value of a metadata key, or NULL (value_len, if not NULL, receives its length). */
const uint8_t *og_lance_field_metadata(const og_lance_field *f, const char *key,
                                       size_t *value_len);

/* Deep copies. */
og_status og_lance_field_copy(og_lance_field *dst, const og_lance_field *src);
og_status og_lance_schema_copy(og_lance_schema *dst, const og_lance_schema *src);

/* A new schema with the top-level fields whose ids are listed (in the order of `src`, not of
 * `ids`) and all their descendants.  Unknown ids are OG_ERR_NOT_FOUND; a child id in `ids`
 * is OG_ERR_INVALID. */
og_status og_lance_schema_select(og_lance_schema *dst, const og_lance_schema *src,
                                 const int32_t *ids, size_t n);

void og_lance_field_free(og_lance_field *f);
void og_lance_schema_free(og_lance_schema *s);

/* --- lookups ---------------------------------------------------------------------------- */

/* Index of the field with this id, or -1. */
long og_lance_schema_find_id(const og_lance_schema *s, int32_t id);
/* Index of the top-level field with this name, or -1. */
long og_lance_schema_find_name(const og_lance_schema *s, const char *name);
/* Index of the first child of field `index` (a LIST's "item"), or -1. */
long og_lance_schema_child(const og_lance_schema *s, size_t index);
/* Number of top-level fields, and the schema index of the i-th one (-1 if out of range). */
size_t og_lance_schema_num_top(const og_lance_schema *s);
long og_lance_schema_top(const og_lance_schema *s, size_t i);

/* Physical columns a data file with this schema has (for our types, one per field), and the
 * column of field `index` — what DataFile.fields / column_indices record. */
size_t og_lance_schema_num_columns(const og_lance_schema *s);
long og_lance_schema_column_index(const og_lance_schema *s, size_t index);

/* Checks the structure the writer and reader rely on: names present, unique ids, pre-order
 * (every parent_id is -1 or the id of an earlier field), a "list" / "large_list" field has
 * exactly one child, and no other field has children.  Types are not checked here (see
 * og_lance_schema_field_type).  OG_ERR_CORRUPT naming the field. */
og_status og_lance_schema_validate(const og_lance_schema *s);

/* --- og_type mapping -------------------------------------------------------------------- */

/* The logical type string of a scalar or VECTOR type ("list" for a LIST). OG_ERR_INVALID. */
og_status og_lance_logical_type(og_type t, char *buf, size_t cap);
/* Parses a non-list logical type.  Accepts what we write plus the aliases LanceDB writes for
 * the same layouts ("large_string" -> STRING, "binary" -> BLOB, "large_list" is not
 * accepted).  OG_ERR_UNSUPPORTED for anything else. */
og_status og_lance_parse_logical_type(const char *logical_type, og_type *out);
/* The og_type of field `index` (for a list field, reads its child's type).  OG_ERR_CORRUPT
 * for a list without a child, OG_ERR_UNSUPPORTED for an unmapped type. */
og_status og_lance_schema_field_type(const og_lance_schema *s, size_t index, og_type *out);

/* --- protobuf --------------------------------------------------------------------------- */

/* Appends the bytes of one `lance.file.Field` message (no tag or length) to `out`. */
og_status og_lance_field_encode(const og_lance_field *f, og_buf *out);
/* Appends every field of `s` as a repeated length-delimited field number `field_no` (1 for
 * both Schema.fields and Manifest.fields). */
og_status og_lance_schema_encode_fields(const og_lance_schema *s, uint32_t field_no, og_buf *out);

/* Decodes one Field message into *out (zeroed first; free with og_lance_field_free).
 * OG_ERR_CORRUPT on malformed bytes or a field without a name. */
og_status og_lance_field_decode(const uint8_t *p, size_t n, og_lance_field *out);
/* Decodes one Field message and appends it to s. */
og_status og_lance_schema_add_decoded(og_lance_schema *s, const uint8_t *p, size_t n);
/* Walks a whole message (`msg`, `n` bytes) and appends every repeated field number
 * `field_no` decoded as a Field (other fields are skipped).  Does not validate; call
 * og_lance_schema_validate. */
og_status og_lance_schema_decode_fields(og_lance_schema *s, const uint8_t *msg, size_t n,
                                        uint32_t field_no);

#endif
