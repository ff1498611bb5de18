meta:
  id: gguf_file
  title: GGUF, the model container of ggml and llama.cpp (versions 1 to 3, either byte order)
  application:
    - llama.cpp
    - ggml
  file-extension: gguf
  license: MIT OR Apache-2.0
  ks-version: '0.11'
doc: |
  GGUF is the single-file container of ggml and llama.cpp: a header, typed key/value metadata,
  a table of tensor descriptors, padding to an alignment, then the tensor data.

      file        = magic version tensor_count kv_count kv{kv_count} tensor_info{tensor_count}
                    padding tensor_data
      kv          = string value_type value(value_type)
      value(t)    = scalar(t) | string | array
      array       = value_type count value(value_type){count}      -- arrays may nest
      tensor_info = string n_dims:u32 dim{n_dims} ggml_type:u32 offset:u64
      string      = count byte{count}                              -- UTF-8, not terminated

  Widths depend on the version: v1 writes every count (tensor_count, kv_count, string and
  array lengths, tensor dims) as u32; v2 and v3 write them as u64. All other widths are fixed.
  The byte order of every multi-byte number (including the version itself) is the file's,
  detected from the version field (see `is_big_endian`).

  The tensor data starts at the end of the tensor infos rounded up to the alignment: the value
  of the KV `general.alignment` when it is present as a u32 greater than zero, 32 otherwise.
  Each tensor's data is at that start plus the tensor's own `offset`.

  This description is structural: it rejects only what cannot be decoded (bad magic, a version
  other than 1-3, an unknown value type, running out of bytes). Rules about what a decodable
  file may contain (ASCII keys, unique keys, alignment a power of two, tensors in order,
  known ggml types, at most 4 dims) are validation, not grammar. Strings are kept as raw bytes
  with a UTF-8 view, so a file with a non-UTF-8 string still parses.
doc-ref:
  - https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
  - https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/gguf.cpp
  - https://github.com/ggml-org/llama.cpp/blob/master/gguf-py/gguf/gguf_reader.py
seq:
  - id: magic
    contents: GGUF
    doc: The four bytes "GGUF", in this order whatever the byte order of the rest.
  - id: body
    type: body
    doc: Everything after the magic, read in the byte order that `is_big_endian` chooses.
instances:
  version_bytes:
    pos: 4
    size: 4
    doc: The four bytes of the version field, raw, only to decide the byte order.
  is_big_endian:
    value: version_bytes[0] == 0 and version_bytes[1] == 0
    doc: |
      The byte order is not written down anywhere in the file: it is inferred from the version
      field, as gguf-py does. Read as a little-endian u32, a version whose low 16 bits are zero
      can only be byte-swapped, since versions are small numbers; the low 16 bits of a
      little-endian u32 are its first two bytes. A little-endian file whose version field alone
      is swapped (00 00 00 03) is therefore read as big-endian, and fails further on.
  ggml_block_sizes:
    value: |
      [1, 1, 32, 32, 0, 0, 32, 32, 32, 32,
       256, 256, 256, 256, 256, 256, 256, 256, 256, 256,
       32, 256, 256, 256, 1, 1, 1, 1, 1, 256,
       1, 0, 0, 0, 256, 256, 0, 0, 0, 32,
       64, 128, 64]
    doc: |
      Elements per block for ggml type ids 0 to 42, from ggml's type_traits (0 where an id was
      removed). Unblocked types (f32, f16, bf16, i8 ... f64) have blocks of one element.
  ggml_type_sizes:
    value: |
      [4, 2, 18, 20, 0, 0, 22, 24, 34, 36,
       84, 110, 144, 176, 210, 292, 66, 74, 98, 50,
       18, 110, 82, 136, 1, 2, 4, 8, 8, 56,
       2, 0, 0, 0, 54, 66, 0, 0, 0, 17,
       36, 18, 18]
    doc: |
      Bytes per block for ggml type ids 0 to 42, from ggml's type_traits (0 where an id was
      removed). q8_1 is 36 bytes here as in ggml; gguf-py's table says 40.
types:
  body:
    meta:
      endian:
        switch-on: _root.is_big_endian
        cases:
          false: le
          true: be
    doc: The types nested here inherit this byte order.
    seq:
      - id: version
        type: u4
        valid:
          any-of: [1, 2, 3]
        doc: 1, 2 or 3, in the file's byte order. It sets the width of every count below.
      - id: tensor_count
        type:
          switch-on: version
          cases:
            1: u4
            _: u8
      - id: metadata_kv_count
        type:
          switch-on: version
          cases:
            1: u4
            _: u8
      - id: metadata_kv
        type: kv(version)
        repeat: expr
        repeat-expr: metadata_kv_count
        doc: The key/value pairs in file order; a duplicate key is kept as written.
      - id: tensor_infos
        type: tensor_info(version)
        repeat: expr
        repeat-expr: tensor_count
      - id: end_of_tensor_infos
        type: position(_io.pos)
        doc: |
          Reads nothing: records the offset just past the last tensor info (or past the last KV
          when there are no tensors), from which the tensor data start is aligned up.
    instances:
      alignment_search:
        type: alignment_probe(_index)
        repeat: until
        repeat-until: _.is_alignment_key or _index + 1 >= metadata_kv_count
        if: metadata_kv_count > 0
        doc: |
          Walks the KVs in file order up to the first one whose key is `general.alignment`
          (or to the last KV when there is none).
      alignment:
        value: |
          metadata_kv_count > 0
          and alignment_search.last.is_alignment_key
          and alignment_search.last.kv.value_type == value_type::uint32
          and alignment_search.last.kv.uint32_value > 0
          ? alignment_search.last.kv.uint32_value
          : 32
        doc: |
          The value of the first `general.alignment` KV when it is a u32 greater than zero,
          else 32. (The spec also wants a multiple of 8 and ggml a power of two: validation.)
      tensor_data_offset:
        value: |
          end_of_tensor_infos.offset
          + (alignment - end_of_tensor_infos.offset % alignment) % alignment
        doc: |
          Absolute offset of the tensor data: the end of the tensor infos rounded up to
          `alignment`, left as is when already aligned. The padding bytes between are not
          read: with no tensors the file may end before the padding.
    types:
      gguf_string:
        params:
          - id: version
            type: u4
        doc: |
          A length-prefixed byte string, not NUL-terminated. The spec says UTF-8; the bytes are kept
          raw and `value` is the UTF-8 reading, so an invalid sequence fails only when read as text.
        seq:
          - id: len
            type:
              switch-on: version
              cases:
                1: u4
                _: u8
            valid:
              max: _io.size - _io.pos
            doc: |
              At most the bytes left in the stream, checked before `data` is read. Without this
              check a runtime that narrows sizes fails silently: kaitai-struct 0.11's JavaScript
              `mapUint8Array` does `length |= 0`, so a length of 2^32+5 read 5 bytes (and the
              file parsed as valid) and 3*10^9 threw "Invalid typed array length". With it, no
              length of a stream under 2 GiB reaches the narrowing; a reader of larger streams in
              JavaScript needs a runtime without it (web/inspector.html's build removes it).
          - id: data
            size: len
        instances:
          value:
            value: data.to_s("UTF-8")
      kv:
        doc: |
          A key and a typed value. Exactly one of the `*_value` fields is present, the one that
          `value_type` names; each type gets its own field so that every target language can
          give it its exact type (a u64 is no double, an i8 no u64).
        params:
          - id: version
            type: u4
        seq:
          - id: key
            type: gguf_string(version)
          - id: value_type
            type: u4
            enum: value_type
            valid:
              in-enum: true
          - id: uint8_value
            type: u1
            if: value_type == value_type::uint8
          - id: int8_value
            type: s1
            if: value_type == value_type::int8
          - id: uint16_value
            type: u2
            if: value_type == value_type::uint16
          - id: int16_value
            type: s2
            if: value_type == value_type::int16
          - id: uint32_value
            type: u4
            if: value_type == value_type::uint32
          - id: int32_value
            type: s4
            if: value_type == value_type::int32
          - id: float32_value
            type: f4
            if: value_type == value_type::float32
          - id: bool_value
            type: u1
            if: value_type == value_type::bool
            doc: One byte, kept as read (0 is false, 1 true; other bytes are not defined).
          - id: string_value
            type: gguf_string(version)
            if: value_type == value_type::string
          - id: array_value
            type: gguf_array(version, 0)
            if: value_type == value_type::array
          - id: uint64_value
            type: u8
            if: value_type == value_type::uint64
          - id: int64_value
            type: s8
            if: value_type == value_type::int64
          - id: float64_value
            type: f8
            if: value_type == value_type::float64
      gguf_array:
        params:
          - id: version
            type: u4
          - id: depth
            type: u4
            doc: How many arrays enclose this one (0 for the value of a KV).
        doc: |
          A homogeneous array: one element type, a count, then that many values of that type,
          packed. The element type may itself be `array`: each inner array then has its own
          element type and count. Exactly one of the `*_elements` lists is present.
        seq:
          - id: nesting_limit
            size: 0
            valid:
              expr: depth < 256
            doc: |
              Reads nothing: arrays nest at most 256 deep, so an array inside 256 others is an
              error. This is the crate's limit, not the spec's (which states none); it bounds a
              reader's recursion on hostile input.
          - id: element_type
            type: u4
            enum: value_type
            valid:
              in-enum: true
          - id: len
            type:
              switch-on: version
              cases:
                1: u4
                _: u8
          - id: uint8_elements
            type: u1
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::uint8
          - id: int8_elements
            type: s1
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::int8
          - id: uint16_elements
            type: u2
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::uint16
          - id: int16_elements
            type: s2
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::int16
          - id: uint32_elements
            type: u4
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::uint32
          - id: int32_elements
            type: s4
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::int32
          - id: float32_elements
            type: f4
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::float32
          - id: bool_elements
            type: u1
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::bool
          - id: string_elements
            type: gguf_string(version)
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::string
          - id: array_elements
            type: gguf_array(version, depth + 1)
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::array
          - id: uint64_elements
            type: u8
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::uint64
          - id: int64_elements
            type: s8
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::int64
          - id: float64_elements
            type: f8
            repeat: expr
            repeat-expr: len
            if: element_type == value_type::float64
      tensor_info:
        params:
          - id: version
            type: u4
        seq:
          - id: name
            type: gguf_string(version)
          - id: n_dims
            type: u4
            doc: Number of dimensions; the spec and ggml allow at most 4 (validation, not grammar).
          - id: dims
            repeat: expr
            repeat-expr: n_dims
            type:
              switch-on: version
              cases:
                1: u4
                _: u8
            doc: Elements along each dimension, ne0 (the fastest-varying) first.
          - id: ggml_type
            type: u4
            enum: ggml_type
            doc: Unknown and removed ids are kept, not rejected.
          - id: offset
            type: u8
            doc: Offset of this tensor's data from `tensor_data_offset` (u64 in every version).
        instances:
          data_offset:
            value: _parent.tensor_data_offset + offset
            doc: Absolute offset of this tensor's data in the file.
          ne0:
            value: 'n_dims > 0 ? dims[0] : 1'
          ne1:
            value: 'n_dims > 1 ? dims[1] : 1'
          ne2:
            value: 'n_dims > 2 ? dims[2] : 1'
          ne3:
            value: 'n_dims > 3 ? dims[3] : 1'
          block_size:
            value: 'ggml_type.to_i < 43 ? _root.ggml_block_sizes[ggml_type.to_i] : 0'
            doc: Elements per block of this ggml type; 0 for a removed or unknown id.
          type_size:
            value: 'ggml_type.to_i < 43 ? _root.ggml_type_sizes[ggml_type.to_i] : 0'
            doc: Bytes per block of this ggml type; 0 for a removed or unknown id.
          has_size:
            value: n_dims <= 4 and block_size != 0 and ne0 % block_size == 0
            doc: |
              Whether ggml gives this tensor a byte size: a known type, at most 4 dims, and
              rows (ne0) made of whole blocks.
          n_bytes:
            value: ne0 / block_size * type_size * ne1 * ne2 * ne3
            if: has_size
            doc: |
              The tensor's size in bytes, as ggml computes it (ggml_nbytes for a contiguous
              tensor): whole blocks per row times bytes per block times the other dims. It must
              fit in a u64; a reader with fixed-width integers has to check each product.
          data:
            pos: _parent.tensor_data_offset + offset
            size: n_bytes
            if: has_size
            doc: The tensor's data. Nothing here reads it unless asked.
      position:
        doc: Reads nothing; remembers the stream position at which it was parsed.
        params:
          - id: offset
            type: u8
      alignment_probe:
        doc: Reads nothing; looks at the KV at `index` (see `alignment_search`).
        params:
          - id: index
            type: u8
        instances:
          kv:
            value: _parent.metadata_kv[index]
          is_alignment_key:
            # "general.alignment", compared as bytes so that a key that is not UTF-8 is no error.
            value: |
              kv.key.data == [0x67, 0x65, 0x6e, 0x65, 0x72, 0x61, 0x6c, 0x2e, 0x61,
                              0x6c, 0x69, 0x67, 0x6e, 0x6d, 0x65, 0x6e, 0x74]
enums:
  value_type:
    0: uint8
    1: int8
    2: uint16
    3: int16
    4: uint32
    5: int32
    6:
      id: float32
      doc: IEEE 754 binary32.
    7:
      id: bool
      doc: One byte.
    8:
      id: string
      doc: Length-prefixed UTF-8, no terminator.
    9:
      id: array
      doc: Element type, count, elements; elements may be arrays.
    10: uint64
    11: int64
    12:
      id: float64
      doc: IEEE 754 binary64.
  ggml_type:
    # Names are ggml's type_name with the K of the k-quants in lower case (Kaitai identifiers
    # are lower case): ggml calls 10..15 q2_K, q3_K, q4_K, q5_K, q6_K, q8_K.
    # Block size (elements) / bytes per block, as ggml's type_traits give them, in the docs.
    0:
      id: f32
      doc: 1 / 4
    1:
      id: f16
      doc: 1 / 2
    2:
      id: q4_0
      doc: 32 / 18
    3:
      id: q4_1
      doc: 32 / 20
    # 4 (q4_2) and 5 (q4_3) were removed from ggml.
    6:
      id: q5_0
      doc: 32 / 22
    7:
      id: q5_1
      doc: 32 / 24
    8:
      id: q8_0
      doc: 32 / 34
    9:
      id: q8_1
      doc: 32 / 36 (gguf-py's table says 40)
    10:
      id: q2_k
      -orig-id: q2_K
      doc: 256 / 84
    11:
      id: q3_k
      -orig-id: q3_K
      doc: 256 / 110
    12:
      id: q4_k
      -orig-id: q4_K
      doc: 256 / 144
    13:
      id: q5_k
      -orig-id: q5_K
      doc: 256 / 176
    14:
      id: q6_k
      -orig-id: q6_K
      doc: 256 / 210
    15:
      id: q8_k
      -orig-id: q8_K
      doc: 256 / 292
    16:
      id: iq2_xxs
      doc: 256 / 66
    17:
      id: iq2_xs
      doc: 256 / 74
    18:
      id: iq3_xxs
      doc: 256 / 98
    19:
      id: iq1_s
      doc: 256 / 50
    20:
      id: iq4_nl
      doc: 32 / 18
    21:
      id: iq3_s
      doc: 256 / 110
    22:
      id: iq2_s
      doc: 256 / 82
    23:
      id: iq4_xs
      doc: 256 / 136
    24:
      id: i8
      doc: 1 / 1
    25:
      id: i16
      doc: 1 / 2
    26:
      id: i32
      doc: 1 / 4
    27:
      id: i64
      doc: 1 / 8
    28:
      id: f64
      doc: 1 / 8
    29:
      id: iq1_m
      doc: 256 / 56
    30:
      id: bf16
      doc: 1 / 2
    # 31-33 (q4_0_4_4, q4_0_4_8, q4_0_8_8) were removed from GGUF files.
    34:
      id: tq1_0
      doc: 256 / 54
    35:
      id: tq2_0
      doc: 256 / 66
    # 36-38 (iq4_nl_4_4, iq4_nl_4_8, iq4_nl_8_8) were removed from GGUF files.
    39:
      id: mxfp4
      doc: 32 / 17
    40:
      id: nvfp4
      doc: 64 / 36
    41:
      id: q1_0
      doc: 128 / 18
    42:
      id: q2_0
      doc: 64 / 18
