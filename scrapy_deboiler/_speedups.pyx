# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled walks over libxml2's nodes for ``sign_tree``, ``tree_text``,
content mode's ``page_blocks`` and ``clean_html`` and the headline's search,
and the content model's tree scorer.

Optional: when this module is not built (or ``SCRAPY_DEBOILER_PURE_PYTHON``
switches it off, ``_compiled``), the pure-Python walks in ``_signatures``,
``_text``, ``_content``, ``_content_html`` and ``_title`` give the same
results (the tests compare them).
It exists because the Python walks cost more than parsing the page: here each
node costs a few pointer hops, and Python is called only to normalise all of a
page's text at once, to hash each signed subtree (hashlib) and to create the
element proxies the caller gets back.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.array cimport array, clone
from cpython.unicode cimport (Py_UNICODE_ISALNUM, Py_UNICODE_ISALPHA, Py_UNICODE_ISDECIMAL,
                              Py_UNICODE_ISUPPER, PyUnicode_1BYTE_DATA, PyUnicode_DATA,
                              PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH,
                              PyUnicode_KIND,
                              PyUnicode_READ)


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    int __builtin_ctzll(unsigned long long x) nogil
from libc.math cimport exp, fabs, log1p, pow
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset, strchr, strcmp, strcspn, strlen, strstr

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlNode

cetree.import_lxml__etree()

cdef enum:
    ELEMENT = 1
    TEXT = 3
    CDATA = 4
    PI = 7
    COMMENT = 8

# Node classes for text extraction (see _text.py).
cdef enum:
    INLINE = 0
    BLOCK = 1
    CELL = 2
    SKIP = 3
    PRE = 4
    BR = 5  # a line break: a block outside a <pre>, a hard line inside one


cdef struct Buf:
    char* data
    Py_ssize_t len
    Py_ssize_t cap


cdef int grow(Buf* b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t cap
    cdef char* p
    if b.len + extra <= b.cap:
        return 0
    cap = b.cap * 2
    if cap < b.len + extra:
        cap = b.len + extra
    if cap < 4096:
        cap = 4096
    p = <char*>realloc(b.data, cap)
    if p == NULL:
        raise MemoryError()
    b.data = p
    b.cap = cap
    return 0


cdef inline int add(Buf* b, const char* s, Py_ssize_t n) except -1:
    grow(b, n)
    memcpy(b.data + b.len, s, n)
    b.len += n
    return 0


cdef inline int add_break(Buf* b) except -1:
    """A line break (NUL), unless one was just added."""
    if b.len and b.data[b.len - 1] == 0:
        return 0
    return add1(b, 0)


cdef inline int add1(Buf* b, char c) except -1:
    grow(b, 1)
    b.data[b.len] = c
    b.len += 1
    return 0


# BLAKE2b (RFC 7693), 8-byte digests only, so that hashing a subtree costs
# no call into Python. test_speedups checks it against hashlib.blake2b.
ctypedef unsigned long long u64

cdef u64[8] IV = [
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
]
cdef unsigned char[12][16] SIGMA = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
]
# "template" as blake2b's 16-byte personalisation, little-endian words.
cdef u64 PERSON_TEMPLATE_0 = 0x6574616c706d6574ULL  # b"template"
cdef char* HEX = b"0123456789abcdef"


cdef inline u64 rotr(u64 x, int n) noexcept nogil:
    return (x >> n) | (x << (64 - n))


cdef inline u64 load64(const unsigned char* p) noexcept nogil:
    cdef u64 r = 0
    cdef int i
    for i in range(7, -1, -1):
        r = (r << 8) | p[i]
    return r


cdef void compress(u64* h, const unsigned char* block, u64 t, bint last) noexcept nogil:
    cdef u64[16] v
    cdef u64[16] m
    cdef int i, r
    cdef const unsigned char* s
    for i in range(16):
        m[i] = load64(block + 8 * i)
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = IV[i]
    v[12] ^= t
    if last:
        v[14] = ~v[14]
    for r in range(12):
        s = SIGMA[r]
        g(v, 0, 4, 8, 12, m[s[0]], m[s[1]])
        g(v, 1, 5, 9, 13, m[s[2]], m[s[3]])
        g(v, 2, 6, 10, 14, m[s[4]], m[s[5]])
        g(v, 3, 7, 11, 15, m[s[6]], m[s[7]])
        g(v, 0, 5, 10, 15, m[s[8]], m[s[9]])
        g(v, 1, 6, 11, 12, m[s[10]], m[s[11]])
        g(v, 2, 7, 8, 13, m[s[12]], m[s[13]])
        g(v, 3, 4, 9, 14, m[s[14]], m[s[15]])
    for i in range(8):
        h[i] ^= v[i] ^ v[i + 8]


cdef inline void g(u64* v, int a, int b, int c, int d, u64 x, u64 y) noexcept nogil:
    v[a] = v[a] + v[b] + x
    v[d] = rotr(v[d] ^ v[a], 32)
    v[c] = v[c] + v[d]
    v[b] = rotr(v[b] ^ v[c], 24)
    v[a] = v[a] + v[b] + y
    v[d] = rotr(v[d] ^ v[a], 16)
    v[c] = v[c] + v[d]
    v[b] = rotr(v[b] ^ v[c], 63)


cdef void blake2b_hex8(const char* data, Py_ssize_t n, bint template, char* out) noexcept nogil:
    """16 lowercase hex digits of blake2b(data, digest_size=8[, person=b"template"])."""
    cdef u64[8] h
    cdef unsigned char[128] block
    cdef Py_ssize_t done = 0
    cdef int i
    cdef u64 x
    for i in range(8):
        h[i] = IV[i]
    h[0] ^= 0x01010000ULL ^ 8
    if template:
        h[6] ^= PERSON_TEMPLATE_0
    while n - done > 128:
        compress(h, <const unsigned char*>data + done, done + 128, False)
        done += 128
    memset(block, 0, 128)
    memcpy(block, data + done, n - done)
    compress(h, block, n, True)
    x = h[0]
    for i in range(8):
        out[2 * i] = HEX[(x >> 4) & 15]
        out[2 * i + 1] = HEX[x & 15]
        x >>= 8


def blake2b8(bytes data, bint template=False):
    """The compiled hash, for tests: same as hashlib's blake2b-64 hexdigest."""
    cdef char[16] out
    blake2b_hex8(data, len(data), template, out)
    return out[:16].decode("ascii")


#: Bytes ``needs_repair`` looks at: C0 controls but tab, newline and CR,
#: and 0xEF (the lead byte of U+FFFE and U+FFFF).
cdef unsigned char[256] REPAIR_BYTE
memset(REPAIR_BYTE, 0, 256)
for _b in range(32):
    REPAIR_BYTE[_b] = _b not in (9, 10, 13)
REPAIR_BYTE[0xef] = 1


def literal_hits(str text, tuple words):
    """Bits of the ``words`` that ``re.compile("|".join(words)).findall(text)``
    finds (leftmost match first, the earliest word winning at a position,
    matches not overlapping), for ASCII ``text`` and at most 64 non-empty
    ASCII words; -1 for text that is not ASCII (the caller then uses the
    regex). Python's regex engine tries an alternation of 32 words slowly:
    2 % of content mode."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0, k = len(words), w
    cdef const unsigned char* t
    cdef const char* ptr[64]
    cdef Py_ssize_t size[64]
    cdef unsigned long long first[256]
    cdef unsigned long long bits = 0, cand
    if not PyUnicode_IS_ASCII(text) or k > 64:
        return -1
    memset(first, 0, sizeof(first))
    for w in range(k):
        word = words[w]
        ptr[w] = PyBytes_AS_STRING(word)
        size[w] = PyBytes_GET_SIZE(word)
        if size[w] == 0:
            return -1
        first[<unsigned char>ptr[w][0]] |= 1ULL << w
    t = <const unsigned char*>PyUnicode_1BYTE_DATA(text)
    while i < n:
        cand = first[t[i]]
        while cand:  # the words starting with this character, in order
            w = __builtin_ctzll(cand)
            cand &= cand - 1
            if size[w] <= n - i and memcmp(t + i, ptr[w], size[w]) == 0:
                bits |= 1ULL << w
                i += size[w] - 1
                break
        i += 1
    return bits


def needs_repair(bytes data):
    """Whether ``_loading.parse_html`` has any byte repair to make in
    ``data`` (UTF-8): a NUL, another C0 control character but tab, newline
    and CR, or the encoding of U+FFFE or U+FFFF. One pass over the bytes
    instead of a ``translate`` copy and four searches (4 % of the CLI's
    instructions); the Python checks still make the repairs."""
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
    cdef bint found
    with nogil:
        found = has_unsettable(p, n)
    return found


cdef bint has_unsettable(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """Whether UTF-8 ``p[:n]`` holds what lxml refuses in text set from
    Python: a C0 control but tab, newline and CR, or U+FFFE / U+FFFF."""
    cdef Py_ssize_t i
    for i in range(n):
        if REPAIR_BYTE[p[i]]:  # a table: one load and test a byte
            if p[i] != 0xef or (i + 2 < n and p[i + 1] == 0xbf and (p[i + 2] == 0xbe or p[i + 2] == 0xbf)):
                return True
    return False


cdef int _cmp_u64(const void* a, const void* b) noexcept nogil:
    cdef u64 x = (<const u64*>a)[0], y = (<const u64*>b)[0]
    return (x > y) - (x < y)


cdef extern from "stdlib.h":
    void qsort(void* base, size_t n, size_t size, int (*cmp)(const void*, const void*) noexcept nogil) nogil


def pack_signatures(list sigs):
    """``bytes.fromhex("".join(sorted(set(sigs))))`` for 16-hex-digit
    signatures: a page's distinct signatures as sorted 8-byte big-endian
    values, sorted as numbers instead of as strings. None if one is not 16
    lowercase hex digits (the caller then uses the Python form)."""
    cdef Py_ssize_t n = len(sigs), i, j, k
    cdef u64* vals = <u64*>malloc((n if n else 1) * sizeof(u64))
    cdef u64 v
    cdef const char* p
    cdef unsigned char c
    cdef bytes out
    cdef unsigned char* o
    if vals == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            sig = sigs[i]
            if not isinstance(sig, str) or PyUnicode_GET_LENGTH(sig) != 16 or not PyUnicode_IS_ASCII(sig):
                return None
            p = <const char*>PyUnicode_1BYTE_DATA(sig)
            v = 0
            for j in range(16):
                c = <unsigned char>p[j]
                if 48 <= c <= 57:
                    v = (v << 4) | (c - 48)
                elif 97 <= c <= 102:
                    v = (v << 4) | (c - 87)
                else:
                    return None
            vals[i] = v
        qsort(vals, n, sizeof(u64), _cmp_u64)
        k = 0
        for i in range(n):
            if k == 0 or vals[i] != vals[k - 1]:
                vals[k] = vals[i]
                k += 1
        out = PyBytes_FromStringAndSize(NULL, 8 * k)
        o = <unsigned char*>PyBytes_AS_STRING(out)
        for i in range(k):
            v = vals[i]
            for j in range(8):
                o[8 * i + j] = <unsigned char>((v >> (56 - 8 * j)) & 0xff)
        return out
    finally:
        free(vals)


cdef inline bint counted_text(xmlNode* node, xmlNode* root) noexcept nogil:
    """Text and CDATA nodes inside ``root``, but not script or style code."""
    cdef const char* parent
    if (node.type != TEXT and node.type != CDATA) or node == root:
        return False
    if node.parent == NULL or node.parent.type != ELEMENT:
        return True
    parent = <const char*>node.parent.name
    return not (strcmp(parent, "script") == 0 or strcmp(parent, "style") == 0)


cdef inline xmlNode* next_node(xmlNode* node, xmlNode* root, bint descend) noexcept nogil:
    """Document order within ``root``; descends into elements only."""
    if descend and node.type == ELEMENT and node.children != NULL:
        return node.children
    while node != root:
        if node.next != NULL:
            return node.next
        node = node.parent
    return NULL


cdef inline bint step(xmlNode** node, xmlNode* root, bint* down) noexcept nogil:
    """Post-order walks move on from ``node`` (just entered if leaf, or just
    left): to its next sibling, entering it, or to its parent, leaving it.
    False once ``root`` is done."""
    if node[0] == root:
        return False
    if node[0].next != NULL:
        node[0] = node[0].next
        down[0] = True
    else:
        node[0] = node[0].parent
        down[0] = False
    return True


cdef struct Frame:
    xmlNode* node
    Py_ssize_t pc, ps, chars0, links0, els0, sigs0


def element_at(object root, size_t address):
    """The element at a node address from ``sign_tree``, in ``root``'s
    document. Valid while the tree is unchanged around that node."""
    cdef cetree._Element el = <cetree._Element?>root
    return cetree.elementFactory(el._doc, <xmlNode*>address)


def nearest_tables(list addresses):
    """For each node address from ``sign_tree``, the address of the nearest
    ``table`` element holding it (0 for none): which boilerplate subtrees
    lie in tables, without an element proxy each."""
    cdef xmlNode* node
    cdef size_t a
    cdef list out = []
    for a in addresses:
        node = (<xmlNode*>a).parent
        while node != NULL and node.type == ELEMENT:
            if node.ns == NULL and node.name != NULL and strcmp(<const char*>node.name, "table") == 0:
                break
            node = node.parent
        out.append(<size_t>node if node != NULL and node.type == ELEMENT else 0)
    return out


cdef bint unsettable_text(xmlNode* node) noexcept nogil:
    """A text node holding characters lxml refuses in text set from Python
    (C0 controls but tab, newline and CR; U+FFFE, U+FFFF: they come from
    character references such as ``&#26;``)."""
    if node == NULL or node.type != TEXT or node.content == NULL:
        return False
    return has_unsettable(<const unsigned char*>node.content, strlen(<const char*>node.content))


def without_nodes(object root, list addresses, object render):
    """``render()`` while the elements at ``addresses`` (node addresses from
    ``sign_tree`` in ``root``'s document, none inside another) are unlinked
    from their tree; the tree is put back exactly as it was before this
    returns, even when ``render`` raises. Boilerplate mode writes a page's
    HTML and text without its boilerplate so, instead of detaching each
    subtree through lxml and merging its tail into a new text node (3.6 us a
    subtree, 26 a page). A tail is a text node of its own here, so it stays
    in place; libxml2 writes two neighbouring text nodes as one. (Pointer
    surgery on the sibling list: libxml2's own functions are not exported
    by lxml's build.) None, without calling ``render``, when text next to a
    subtree holds characters that detaching through lxml would drop
    (``_text.drop``): the caller detaches then, for the same output."""
    cdef cetree._Element el = <cetree._Element?>root
    cdef Py_ssize_t n = len(addresses), i
    cdef xmlNode* node
    cdef xmlNode* parent
    cdef xmlNode** nodes = <xmlNode**>malloc((3 * n + 1) * sizeof(xmlNode*))
    cdef xmlNode** prevs = nodes + n
    cdef xmlNode** nexts = nodes + 2 * n
    if nodes == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            node = <xmlNode*><size_t>addresses[i]
            if node.doc != el._c_node.doc or node.type != ELEMENT or node.parent == NULL:
                raise ValueError("not an element inside this tree")
            if unsettable_text(node.prev) or unsettable_text(node.next):
                return None  # detaching through lxml would change that text
            nodes[i] = node
        for i in range(n):  # out of the sibling list; its own links stay
            node = nodes[i]
            parent = node.parent
            prevs[i] = node.prev
            nexts[i] = node.next
            if node.prev != NULL:
                node.prev.next = node.next
            else:
                parent.children = node.next
            if node.next != NULL:
                node.next.prev = node.prev
            else:
                parent.last = node.prev
        try:
            return render()
        finally:  # back in reverse order: each between the neighbours it had
            for i in range(n - 1, -1, -1):
                node = nodes[i]
                parent = node.parent
                node.prev = prevs[i]
                node.next = nexts[i]
                if prevs[i] != NULL:
                    prevs[i].next = node
                else:
                    parent.children = node
                if nexts[i] != NULL:
                    nexts[i].prev = node
                else:
                    parent.last = node
    finally:
        free(nodes)


# Growable C buffers for the walks that run without the GIL: they report
# running out of memory with -1 instead of raising (raised after the walk).
cdef int c_grow(Buf* b, Py_ssize_t extra) noexcept nogil:
    cdef Py_ssize_t cap
    cdef char* p
    if b.len + extra <= b.cap:
        return 0
    cap = b.cap * 2
    if cap < b.len + extra:
        cap = b.len + extra
    if cap < 4096:
        cap = 4096
    p = <char*>realloc(b.data, cap)
    if p == NULL:
        return -1
    b.data = p
    b.cap = cap
    return 0


cdef inline int c_add(Buf* b, const char* s, Py_ssize_t n) noexcept nogil:
    if c_grow(b, n) < 0:
        return -1
    memcpy(b.data + b.len, s, n)
    b.len += n
    return 0


cdef inline int c_add1(Buf* b, char c) noexcept nogil:
    if b.len + 1 > b.cap and c_grow(b, 1) < 0:
        return -1
    b.data[b.len] = c
    b.len += 1
    return 0


# Tag names met in a tree, by libxml2's name pointer (the parser interns
# names, so a page has a few dozen), with whether each is a candidate.
cdef struct Name:
    const char* name
    int flag


cdef struct Names:
    Name* items
    Py_ssize_t n, cap


cdef Py_ssize_t names_find(Names* t, const char* name) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(t.n):
        if t.items[i].name == name:
            return i
    for i in range(t.n):  # not interned: the same name at another address
        if strcmp(t.items[i].name, name) == 0:
            return i
    return -1


cdef int names_add(Names* t, const char* name) noexcept nogil:
    cdef Name* grown
    if names_find(t, name) >= 0:
        return 0
    if t.n == t.cap:
        t.cap = t.cap * 2 + 32
        grown = <Name*>realloc(t.items, t.cap * sizeof(Name))
        if grown == NULL:
            return -1
        t.items = grown
    t.items[t.n].name = name
    t.items[t.n].flag = 0
    t.n += 1
    return 0


cdef inline bint ascii_space(unsigned char c) noexcept nogil:
    """``str.split``'s whitespace among ASCII characters."""
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


cdef bint normalise_ascii(Buf* raw) noexcept nogil:
    """``"".join(text.split()).casefold()`` in place, for ASCII text; False
    (buffer untouched) when it holds other bytes."""
    cdef Py_ssize_t i, j = 0
    cdef unsigned char c
    for i in range(raw.len):
        if <unsigned char>raw.data[i] >= 128:
            return False
    for i in range(raw.len):
        c = <unsigned char>raw.data[i]
        if ascii_space(c):
            continue
        if 65 <= c <= 90:
            c += 32
        raw.data[j] = <char>c
        j += 1
    raw.len = j
    return True


cdef inline Py_ssize_t space_len(const unsigned char* p, Py_ssize_t left) noexcept nogil:
    """Bytes of the UTF-8 character at ``p`` when ``str.split`` counts it as
    whitespace (``str.isspace``), else 0."""
    cdef unsigned char c = p[0], d, e
    if c < 128:
        return 1 if ascii_space(c) else 0
    if c == 0xc2 and left >= 2:
        d = p[1]
        return 2 if d == 0x85 or d == 0xa0 else 0
    if left < 3:
        return 0
    d = p[1]
    e = p[2]
    if c == 0xe1:  # U+1680
        return 3 if d == 0x9a and e == 0x80 else 0
    if c == 0xe2:
        if d == 0x80:  # U+2000-U+200A, U+2028, U+2029, U+202F
            return 3 if (0x80 <= e <= 0x8a) or e == 0xa8 or e == 0xa9 or e == 0xaf else 0
        return 3 if d == 0x81 and e == 0x9f else 0  # U+205F
    if c == 0xe3:  # U+3000
        return 3 if d == 0x80 and e == 0x80 else 0
    return 0


cdef void squeeze_spaces(Buf* raw) noexcept nogil:
    """Remove what ``str.split`` counts as whitespace from UTF-8 text and
    lower ASCII capitals, in place: ``"".join(text.split())`` before a
    ``casefold`` that then gives the same result."""
    cdef const unsigned char* p = <const unsigned char*>raw.data
    cdef Py_ssize_t i = 0, j = 0, k, n = raw.len
    cdef unsigned char c
    while i < n:
        k = space_len(p + i, n - i)
        if k:
            i += k
            continue
        c = p[i]
        if 65 <= c <= 90:
            c += 32
        raw.data[j] = <char>c
        i += 1
        j += 1
    raw.len = j


cdef struct Signed:
    char hexsig[16]
    size_t node
    Py_ssize_t start
    Py_ssize_t chars  # normalised text characters in the subtree
    bint shape  # a template (structure-only) signature


cdef struct SignOut:
    Signed* items
    Py_ssize_t n, cap
    Py_ssize_t total_chars


cdef inline int sign_out(SignOut* o, const char* hexsig, xmlNode* node, Py_ssize_t start,
                         Py_ssize_t chars, bint shape) noexcept nogil:
    cdef Signed* grown
    if o.n == o.cap:
        o.cap = o.cap * 2 + 256
        grown = <Signed*>realloc(o.items, o.cap * sizeof(Signed))
        if grown == NULL:
            return -1
        o.items = grown
    memcpy(o.items[o.n].hexsig, hexsig, 16)
    o.items[o.n].node = <size_t>node
    o.items[o.n].start = start
    o.items[o.n].chars = chars
    o.items[o.n].shape = shape
    o.n += 1
    return 0


def sign_tree(object root, object scheme):
    """(signatures, node addresses, starts, chars, shapes, total chars) as
    ``_signatures.sign_tree_py`` defines them (in document post-order), or None for trees this walk does
    not handle (namespaced elements). Addresses, not elements: creating
    element proxies costs as much as the rest, and only removed subtrees need
    them (``element_at``). The walks run without the GIL: Python is called
    only to ask which tag names are candidates and, for text that is not
    ASCII, to normalise it."""
    cdef cetree._Element el = <cetree._Element?>root
    cdef xmlNode* c_root = el._c_node
    cdef Buf raw, cbuf, sbuf, xbuf
    cdef Names names
    cdef SignOut out
    cdef Py_ssize_t i, failed = 0
    cdef bint namespaced = False, ascii
    cdef bytes normalised = None
    cdef Py_ssize_t min_elements = scheme.template_min_elements or (1 << 62)
    cdef double density = scheme.template_link_density
    cdef Py_ssize_t reach = scheme.template_context
    raw.data = NULL; raw.len = 0; raw.cap = 0
    xbuf.data = NULL; xbuf.len = 0; xbuf.cap = 0
    cbuf.data = NULL; cbuf.len = 0; cbuf.cap = 0
    sbuf.data = NULL; sbuf.len = 0; sbuf.cap = 0
    names.items = NULL; names.n = 0; names.cap = 0
    out.items = NULL; out.n = 0; out.cap = 0; out.total_chars = 0
    try:
        with nogil:
            failed = _sign_pass1(c_root, &raw, &names, &namespaced)
            ascii = failed == 0 and not namespaced and normalise_ascii(&raw)
        if failed:
            raise MemoryError()
        if namespaced:
            return None
        candidates = scheme.candidates
        for i in range(names.n):
            names.items[i].flag = bool(candidates(names.items[i].name.decode("utf-8", "surrogatepass")))
        if not ascii:
            # Whitespace out and ASCII lowered here; Python only casefolds
            # what is left (no split and join over every word).
            squeeze_spaces(&raw)
            text = PyBytes_FromStringAndSize(raw.data, raw.len).decode("utf-8", "surrogatepass")
            normalised = text.casefold().encode("utf-8", "surrogatepass")
            free(raw.data)
            raw.data = NULL
            raw.len = len(normalised)
            raw.data = <char*>malloc(raw.len + 1)
            if raw.data == NULL:
                raise MemoryError()
            memcpy(raw.data, PyBytes_AS_STRING(normalised), raw.len)
        with nogil:
            failed = _sign_pass2(c_root, raw.data, raw.data + raw.len, &names, &cbuf, &sbuf, &xbuf, &out,
                                 min_elements, density, reach)
        if failed:
            raise MemoryError()
        signatures = [out.items[i].hexsig[:16].decode("ascii") for i in range(out.n)]
        elements = [out.items[i].node for i in range(out.n)]
        starts = [out.items[i].start for i in range(out.n)]
        chars = [out.items[i].chars for i in range(out.n)]
        shapes = [i for i in range(out.n) if out.items[i].shape]
        return signatures, elements, starts, chars, shapes, out.total_chars
    finally:
        free(raw.data)
        free(cbuf.data)
        free(sbuf.data)
        free(xbuf.data)
        free(names.items)
        free(out.items)


cdef int _sign_pass1(xmlNode* c_root, Buf* raw, Names* names, bint* namespaced) noexcept nogil:
    """All text in document order, NUL-separated (normalised next, all at
    once, exactly as normalise()), and the tag names met."""
    cdef xmlNode* node = c_root
    while node != NULL:
        if node.type == ELEMENT:
            if node.ns != NULL:
                namespaced[0] = True
                return 0
            if names_add(names, <const char*>node.name) < 0:
                return -1
        if counted_text(node, c_root):
            if node.content != NULL:
                if c_add(raw, <const char*>node.content, strlen(<const char*>node.content)) < 0:
                    return -1
            if c_add1(raw, 0) < 0:
                return -1
        node = next_node(node, c_root, True)
    return 0


cdef int _sign_pass2(xmlNode* c_root, const char* tp, const char* tend, Names* names, Buf* cbuf,
                     Buf* sbuf, Buf* xbuf, SignOut* out, Py_ssize_t min_elements, double density,
                     Py_ssize_t reach) noexcept nogil:
    """Post-order with explicit frames and two scratch buffers used as
    stacks: an element's content starts at its frame's offset and is
    replaced by its digest once hashed. ``xbuf``: a template signature with
    its ``reach`` nearest ancestors' tags (``_signatures._in_context``),
    read off the frames below the element's."""
    cdef xmlNode* node = c_root
    cdef Frame* frames = NULL
    cdef Frame* grown
    cdef Frame f
    cdef Py_ssize_t depth = 0, cap = 0, n, n_chars, n_links, n_el, k, j
    cdef Py_ssize_t total_chars = 0, total_links = 0, total_els = 0
    cdef const char* piece
    cdef const char* name
    cdef bint down = True, cand
    cdef char[16] hexsig
    cdef int err = 0
    while True:
        if down and node.type == ELEMENT:
            if depth == cap:
                cap = cap * 2 + 64
                grown = <Frame*>realloc(frames, cap * sizeof(Frame))
                if grown == NULL:
                    err = -1
                    break
                frames = grown
            f.node = node
            f.pc = cbuf.len
            f.ps = sbuf.len
            f.chars0 = total_chars
            f.links0 = total_links
            f.els0 = total_els
            f.sigs0 = out.n
            frames[depth] = f
            depth += 1
            total_els += 1
            name = <const char*>node.name
            n = strlen(name)
            if (c_add1(cbuf, 1) < 0 or c_add(cbuf, name, n) < 0 or c_add1(cbuf, 2) < 0
                    or c_add1(sbuf, 1) < 0 or c_add(sbuf, name, n) < 0 or c_add1(sbuf, 2) < 0):
                err = -1
                break
            if node.children != NULL:
                node = node.children
                continue
            down = False  # an empty element ends at once
        if not down:
            # Leaving the element on top of the frame stack.
            depth -= 1
            f = frames[depth]
            name = <const char*>node.name
            n_chars = total_chars - f.chars0
            n_el = total_els - f.els0
            if name[0] == 97 and name[1] == 0:  # "a"
                total_links = f.links0 + n_chars
            n_links = total_links - f.links0
            k = names_find(names, name)
            cand = k >= 0 and names.items[k].flag
            if n_chars and cand:
                blake2b_hex8(cbuf.data + f.pc, cbuf.len - f.pc, False, hexsig)
                if sign_out(out, hexsig, node, f.sigs0, n_chars, False) < 0:
                    err = -1
                    break
                cbuf.len = f.pc
                if c_add1(cbuf, 3) < 0 or c_add(cbuf, hexsig, 16) < 0:
                    err = -1
                    break
            elif c_add1(cbuf, 5) < 0:
                err = -1
                break
            if n_el >= min_elements:
                blake2b_hex8(sbuf.data + f.ps, sbuf.len - f.ps, True, hexsig)
                sbuf.len = f.ps
                if c_add1(sbuf, 3) < 0 or c_add(sbuf, hexsig, 16) < 0:
                    err = -1
                    break
                if n_chars and n_links >= density * n_chars:
                    if reach:
                        xbuf.len = 0
                        if c_add(xbuf, hexsig, 16) < 0 or c_add1(xbuf, 4) < 0:
                            err = -1
                            break
                        j = depth - 1
                        while j >= 0 and j >= depth - reach:
                            name = <const char*>frames[j].node.name
                            if c_add(xbuf, name, strlen(name)) < 0 or c_add1(xbuf, 2) < 0:
                                err = -1
                                break
                            j -= 1
                        if err:
                            break
                        blake2b_hex8(xbuf.data, xbuf.len, True, hexsig)
                    if sign_out(out, hexsig, node, f.sigs0, n_chars, True) < 0:
                        err = -1
                        break
            elif c_add1(sbuf, 5) < 0:
                err = -1
                break
        elif counted_text(node, c_root):
            piece = tp
            while tp < tend and tp[0] != 0:
                if (<unsigned char>tp[0] & 0xC0) != 0x80:
                    total_chars += 1
                tp += 1
            if tp > piece and c_add(cbuf, piece, tp - piece) < 0:
                err = -1
                break
            tp += 1
        if not step(&node, c_root, &down):
            break
    free(frames)
    out.total_chars = total_chars
    return err


cdef int finish_lines(Buf* src, Buf* out) noexcept nogil:
    """``_text.finish_text`` on UTF-8 bytes: the lines between NULs with
    their whitespace collapsed to single spaces, blank ones dropped, joined
    by newlines."""
    cdef const unsigned char* p = <const unsigned char*>src.data
    cdef Py_ssize_t i = 0, n = src.len, k, start
    cdef bint line_has = False, space = False, newline = False
    while i < n:
        if p[i] == 0:
            if line_has:
                newline = True
            line_has = False
            space = False
            i += 1
            continue
        k = space_len(p + i, n - i)
        if k:
            space = True
            i += k
            continue
        start = i  # a run of characters that are not whitespace
        i += 1
        while i < n and p[i] != 0 and space_len(p + i, n - i) == 0:
            i += 1
        if newline:
            if c_add1(out, 10) < 0:
                return -1
            newline = False
        elif space and line_has:
            if c_add1(out, 32) < 0:
                return -1
        space = False
        line_has = True
        if c_add(out, <const char*>p + start, i - start) < 0:
            return -1
    return 0


def finish_text(bytes marked):
    """The compiled ``_text.finish_text``, for tests (UTF-8 in, str out)."""
    cdef Buf src, out
    src.data = PyBytes_AS_STRING(marked); src.len = PyBytes_GET_SIZE(marked); src.cap = src.len
    out.data = NULL; out.len = 0; out.cap = 0
    try:
        if finish_lines(&src, &out) < 0:
            raise MemoryError()
        return PyBytes_FromStringAndSize(out.data, out.len).decode("utf-8", "surrogatepass")
    finally:
        free(out.data)


cdef int _text_code(Names* names, xmlNode* node, dict classes) except -1:
    """The class of ``node``'s tag for ``tree_text``, asked of ``classes``
    once per name a page (not twice per element)."""
    cdef Py_ssize_t k = names_find(names, <const char*>node.name)
    if k >= 0:
        return names.items[k].flag
    code = classes.get(<bytes>(<const char*>node.name), INLINE)
    if names_add(names, <const char*>node.name) < 0:
        raise MemoryError()
    names.items[names.n - 1].flag = code
    return code


def tree_text(object root, dict classes, bint finish=False):
    """Text of ``root`` with NUL where lines break and the lines of a
    ``<pre>`` marked, as ``_text.tree_text_py`` builds it before the final
    whitespace pass (with ``finish``, after it, as ``_text.finish_text``
    does, unless the page has a ``<pre>``: that is left to Python); None
    for namespaced trees."""
    cdef cetree._Element el = <cetree._Element?>root
    cdef xmlNode* c_root = el._c_node
    cdef xmlNode* node = c_root
    cdef Buf out
    cdef bint down = True
    cdef int code
    cdef Py_ssize_t pre = 0, i, n
    cdef bint marked = False
    cdef const char* content
    cdef Names names
    cdef Buf fin
    out.data = NULL; out.len = 0; out.cap = 0
    fin.data = NULL; fin.len = 0; fin.cap = 0
    names.items = NULL; names.n = 0; names.cap = 0
    try:
        while True:
            if down and node.type == ELEMENT:
                if node.ns != NULL:
                    return None
                code = _text_code(&names, node, classes)
                if code != SKIP:  # skipped elements are not entered
                    if code == PRE:
                        add_break(&out)
                        add1(&out, 3)  # the first line of a <pre>
                    elif code == BLOCK or (code == BR and not pre):
                        add_break(&out)
                        if pre:
                            add1(&out, 1)  # a soft line of a <pre>
                    elif code == BR:  # in a <pre>, a line break of its text
                        add_break(&out)
                        add1(&out, 2)
                    elif code == CELL:
                        add1(&out, 32)
                    if code == PRE:
                        pre += 1
                        marked = True
                    if node.children != NULL:
                        node = node.children
                        continue
                    down = False  # an empty element ends at once
            elif down and (node.type == TEXT or node.type == CDATA) and node != c_root:
                content = <const char*>node.content
                if content != NULL:
                    if not pre:
                        add(&out, content, strlen(content))
                    else:  # each line break of the text starts a hard line
                        n = strlen(content)
                        for i in range(n):
                            if content[i] == 10:
                                add1(&out, 0)
                                add1(&out, 2)
                            else:
                                add1(&out, content[i])
            if not down:
                code = _text_code(&names, node, classes)
                if code == PRE:
                    pre -= 1
                if code == BLOCK or code == PRE or (code == BR and not pre):
                    add_break(&out)
                    if pre:
                        add1(&out, 1)
                elif code == CELL:
                    add1(&out, 32)
            if not step(&node, c_root, &down):
                break
        if finish and not marked:
            if finish_lines(&out, &fin) < 0:
                raise MemoryError()
            return PyBytes_FromStringAndSize(fin.data, fin.len).decode("utf-8", "surrogatepass")
        return PyBytes_FromStringAndSize(out.data, out.len).decode("utf-8", "surrogatepass")
    finally:
        free(out.data)
        free(fin.data)
        free(names.items)


def score_trees(list rows, const int[:] feature, const double[:] threshold, const int[:] left,
                const int[:] right, const double[:] value, const int[:] roots, double base):
    """Sum of a tree ensemble's leaf values per row, plus ``base`` (raw
    scores; ``_content._Trees`` defines the layout and checks this
    against its Python walk). A node is a leaf when ``left`` is -1.
    The rows are copied into one flat array for ``score_table``."""
    cdef Py_ssize_t n = len(rows), r, i, width = 1
    cdef list row
    cdef array flat
    cdef double* out
    for i in range(feature.shape[0]):
        if feature[i] >= width:
            width = feature[i] + 1
    flat = clone(_DOUBLES, n * width, False)
    out = flat.data.as_doubles
    for r in range(n):
        row = rows[r]
        if len(row) < width:
            raise IndexError(f"row {r} has {len(row)} features; the trees read feature {width - 1}")
        for i in range(width):
            out[r * width + i] = <double>row[i]
    return score_table(flat, width, feature, threshold, left, right, value, roots, base)


cdef str _run_text(xmlNode* c):
    """lxml's ``.text``/``.tail``: the consecutive text and CDATA nodes
    from ``c`` on, joined (None-like "" when there are none)."""
    cdef Buf b
    cdef const char* content
    if c == NULL or (c.type != TEXT and c.type != CDATA):
        return ""
    if c.next == NULL or (c.next.type != TEXT and c.next.type != CDATA):
        content = <const char*>c.content
        return content.decode("utf-8", "surrogatepass") if content != NULL else ""
    b.data = NULL; b.len = 0; b.cap = 0
    try:
        while c != NULL and (c.type == TEXT or c.type == CDATA):
            content = <const char*>c.content
            if content != NULL:
                add(&b, content, strlen(content))
            c = c.next
        return PyBytes_FromStringAndSize(b.data, b.len).decode("utf-8", "surrogatepass")
    finally:
        free(b.data)


cdef str _prop(xmlNode* node, const char* name):
    """An attribute without namespace, as ``el.get(name)``; read from the
    node's attribute list (no libxml2 call, no allocation)."""
    cdef tree.xmlAttr* attr = node.properties
    while attr != NULL:
        if attr.ns == NULL and strcmp(<const char*>attr.name, name) == 0:
            return _run_text(attr.children)
        attr = attr.next
    return None


cdef inline void _apart(list parts):
    """A " " part (where words part), once the block has text, and one in a row."""
    if parts and parts[len(parts) - 1] is not _SPACE:
        parts.append(_SPACE)


cdef str _SPACE = " "


cdef inline void _add_text(list frame, str text, list order):
    """As ``_content.page_blocks_py``: whitespace is a " " part once the
    block has text (where words part in ``_content.shown_text``)."""
    cdef list block = frame[0]
    if not text:
        return
    if text.isspace():
        _apart(block[4])
        return
    if not block[4]:
        order.append(block)
    block[4].append(text)
    if frame[1]:
        block[5] += len(text.strip())


#: ``_content.APART_TAGS`` beyond the block tags: a table's cells, a button.
_APART_EXTRA = frozenset((b"td", b"th", b"button"))
#: The frame of a skipped element whose edges part words.
cdef object _APART_SKIPPED = object()


cdef u64 FNV_PRIME = 0x100000001b3ULL


cdef inline u64 _fnv(u64 h, const char* s) noexcept:
    while s[0] != 0:
        h = (h ^ <unsigned char>s[0]) * FNV_PRIME
        s += 1
    return h


cdef u64 _place_hash(u64 parent, xmlNode* node) noexcept:
    """A hash of the element's place: its parent's place, its tag and its
    class with digits and whitespace left out (``_content.place_keys``
    builds the same partition of blocks from strings). FNV-1a: a grouping
    key within one page, never stored."""
    cdef u64 h = 0xcbf29ce484222325ULL
    cdef int i
    cdef unsigned char c
    cdef tree.xmlAttr* attr = node.properties
    cdef xmlNode* text
    cdef const char* p
    for i in range(8):
        h = (h ^ ((parent >> (8 * i)) & 0xff)) * FNV_PRIME
    h = _fnv(h, <const char*>node.name)
    h = (h ^ 46) * FNV_PRIME  # "."
    while attr != NULL:
        if attr.ns == NULL and strcmp(<const char*>attr.name, "class") == 0:
            text = attr.children
            while text != NULL and (text.type == TEXT or text.type == CDATA):
                p = <const char*>text.content
                while p != NULL and p[0] != 0:
                    c = <unsigned char>p[0]
                    if not (48 <= c <= 57 or c == 32 or 9 <= c <= 13):
                        h = (h ^ c) * FNV_PRIME
                    p += 1
                text = text.next
            break
        attr = attr.next
    return (h ^ 47) * FNV_PRIME  # "/"


def block_walk(object root, set skip, set near, frozenset block_tags, frozenset skip_tags,
               object hint_of, dict hint_cache, object class_hides=None):
    """``_content.page_blocks_py``'s walk over libxml2's nodes: blocks as
    [node address, depth, hint bits, near, text parts, link characters,
    place hash of the parent] in
    order of their first text, or None for namespaced trees. ``skip`` and
    ``near`` hold node addresses; ``hint_of(class, id)`` gives hint bits,
    looked up first in ``hint_cache`` by ``(class, id)``; with
    ``class_hides`` hidden elements are skipped too."""
    return _walk_blocks(root, skip, near, block_tags, skip_tags, hint_of, hint_cache, class_hides)


cdef object _walk_blocks(object root, set skip, set near, frozenset block_tags, frozenset skip_tags,
                         object hint_of, dict hint_cache, object class_hides):
    cdef cetree._Element el = <cetree._Element?>root
    cdef xmlNode* c_root = el._c_node
    cdef xmlNode* node = c_root
    cdef bint down = True
    cdef list frames = [[None, False, 0, -1, False, 0, False]]
    cdef list order = []
    cdef list parent, frame, block
    cdef object left
    cdef bytes name
    cdef str cls, ident
    cdef size_t address
    cdef bint apart
    while True:
        if down and node.type == ELEMENT:
            if node.ns != NULL:
                return None
            name = <bytes>(<const char*>node.name)
            address = <size_t>node
            if (name in skip_tags or address in skip
                    or (class_hides is not None and node.properties != NULL and name != b"html"
                        and name != b"body" and _hidden(node, class_hides))):
                # Not entered; its tail still counts.
                frames.append(_APART_SKIPPED if name in block_tags or name in _APART_EXTRA else None)
                down = False
            else:
                parent = frames[len(frames) - 1]
                hints = parent[2]
                cls = _prop(node, "class")
                ident = _prop(node, "id")
                if cls or ident:
                    key = (cls, ident)
                    bits = hint_cache.get(key)
                    if bits is None:
                        bits = hint_cache[key] = hint_of(cls, ident)
                    hints |= bits
                is_near = parent[4] or (bool(near) and address in near)
                block = parent[0]
                apart = name in block_tags
                if block is None or apart:
                    block = [address, parent[3] + 1, hints, is_near, [], 0, parent[5]]
                elif name in _APART_EXTRA:
                    apart = True
                    _apart(block[4])
                frame = [block, parent[1] or name == b"a", hints, parent[3] + 1, is_near,
                         _place_hash(parent[5], node), apart]
                frames.append(frame)
                _add_text(frame, _run_text(node.children), order)
                if node.children != NULL:
                    node = node.children
                    continue
                down = False
        elif down and (node.type == COMMENT or node.type == PI):
            # As iterwalk sees them: not entered, their tail kept.
            parent = frames[len(frames) - 1]
            if parent is not None and parent[0] is not None:
                _add_text(parent, _run_text(node.next), order)
        if not down:  # leaving an element
            left = frames.pop()  # (no negative indexes: wraparound is off)
            parent = frames[len(frames) - 1]
            if parent is not None and parent[0] is not None:
                if left is _APART_SKIPPED or (left is not None and (<list>left)[6]):
                    _apart(parent[0][4])  # words part at a nested block's or a cell's edge
                _add_text(parent, _run_text(node.next), order)
        if not step(&node, c_root, &down):
            break
    return order


#: ``_hidden.PANEL_ROLES`` and ``PANEL_CLASS_WORDS`` (the extension
#: imports nothing of the package's).
_PANEL_ROLES = frozenset(("tabpanel", "region"))
_PANEL_CLASS_WORDS = ("accordion", "tab-pane", "expander", "faq")


cdef bint _panel_class(str value):
    """``_hidden._panel_class``: a class naming a panel."""
    cdef str low = value.lower()
    cdef str word
    for word in _PANEL_CLASS_WORDS:
        if word in low:
            return True
    return False


cdef bint _hidden(xmlNode* node, object class_hides):
    """``_hidden._is_hidden`` on libxml2's attribute list (callers check
    first that the node has attributes); ``class_hides(class)`` is
    ``_hidden._class_hides``. A panel (``_hidden._panel``: a tab's, an
    accordion's) is never hidden, wherever its ``role`` or ``class`` stands
    among the attributes."""
    cdef tree.xmlAttr* attr = node.properties
    cdef str value
    cdef bint hides = False
    while attr != NULL:
        if attr.ns == NULL:
            if strcmp(<const char*>attr.name, "role") == 0:
                value = _run_text(attr.children)
                if value and not _PANEL_ROLES.isdisjoint(value.lower().split()):
                    return False
            elif strcmp(<const char*>attr.name, "class") == 0:
                value = _run_text(attr.children)
                if value and _panel_class(value):
                    return False
                if not hides and value and class_hides(value):
                    hides = True
            elif hides:
                pass
            elif strcmp(<const char*>attr.name, "hidden") == 0:
                hides = True
            elif strcmp(<const char*>attr.name, "aria-hidden") == 0:
                value = _run_text(attr.children)
                if value and value.strip().lower() == "true":
                    hides = True
            elif strcmp(<const char*>attr.name, "style") == 0:
                value = _run_text(attr.children)
                if value:
                    value = "".join(value.split()).lower()
                    if "display:none" in value or "visibility:hidden" in value:
                        hides = True
        attr = attr.next
    return hides


def address_of(object element):
    """The node address of an element proxy (the inverse of ``element_at``)."""
    return <size_t>(<cetree._Element?>element)._c_node


cdef struct Stat:
    xmlNode* node
    u64 place  # the place hash of its parent (its run)
    Py_ssize_t words, chars, links, digits, depth
    Py_ssize_t commas, stops, tokens, token_chars, cased, upper, siblings, same_tag
    double overlap
    bint ends, near
    long long hints


cdef Py_ssize_t _element_depth(xmlNode* node) noexcept:
    cdef Py_ssize_t d = 0
    while node.parent != NULL and node.parent.type == ELEMENT:
        node = node.parent
        d += 1
    return d


cdef xmlNode* _common_ancestor(xmlNode* a, xmlNode* b) noexcept:
    """The lowest element that is ``a`` or ``b`` or an ancestor of both."""
    cdef Py_ssize_t da = _element_depth(a), db = _element_depth(b)
    while da > db:
        a = a.parent
        da -= 1
    while db > da:
        b = b.parent
        db -= 1
    while a != b:
        a = a.parent
        b = b.parent
        if a == NULL or b == NULL or a.type != ELEMENT or b.type != ELEMENT:
            return NULL
    return a


# Character classes of the block table's loops. ASCII (nearly every
# character of most pages) from a table: Py_UNICODE_ISALNUM and friends are
# calls into CPython's Unicode database, most of the table's time on long
# pages (1.5 of 2.6 ms for a page of 400 paragraphs). Same answers.
cdef enum:
    C_DIGIT = 1
    C_UPPER = 2
    C_LOWER = 4


cdef unsigned char[128] _ASCII_CLASS
for _c in range(128):
    _ASCII_CLASS[_c] = (C_DIGIT if 48 <= _c <= 57 else 0) | (C_UPPER if 65 <= _c <= 90 else 0) \
        | (C_LOWER if 97 <= _c <= 122 else 0)


cdef inline bint _word_char(Py_UCS4 ch) noexcept:
    """``\\w`` as re defines it: alphanumeric or "_"."""
    if ch < 128:
        return _ASCII_CLASS[ch] != 0 or ch == 95
    return Py_UNICODE_ISALNUM(ch)


cdef inline bint _decimal(Py_UCS4 ch) noexcept:
    if ch < 128:
        return _ASCII_CLASS[ch] == C_DIGIT
    return Py_UNICODE_ISDECIMAL(ch)


cdef inline bint _alpha(Py_UCS4 ch) noexcept:
    if ch < 128:
        return (_ASCII_CLASS[ch] & (C_UPPER | C_LOWER)) != 0
    return Py_UNICODE_ISALPHA(ch)


cdef inline bint _upper(Py_UCS4 ch) noexcept:
    if ch < 128:
        return _ASCII_CLASS[ch] == C_UPPER
    return Py_UNICODE_ISUPPER(ch)


cdef bint _collapse_ascii(list parts, Buf* out) except -1:
    """``" ".join(" ".join(parts).split())`` into ``out`` when every part is
    ASCII (most blocks of most pages): one pass, no intermediate strings.
    False, ``out`` unused, otherwise."""
    cdef object part
    cdef const unsigned char* p
    cdef Py_ssize_t i, n
    cdef bint space = False
    cdef unsigned char c
    for part in parts:
        if not PyUnicode_IS_ASCII(part):
            return False
    out.len = 0
    for part in parts:
        if out.len:
            space = True  # the joining space
        p = PyUnicode_1BYTE_DATA(part)
        n = PyUnicode_GET_LENGTH(part)
        grow(out, n + 1)
        for i in range(n):
            c = p[i]
            if ascii_space(c):
                space = out.len > 0
            else:
                if space:
                    out.data[out.len] = 32
                    out.len += 1
                    space = False
                out.data[out.len] = <char>c
                out.len += 1
    return True


cdef struct Span:
    Py_ssize_t start, end
    u64 h


# Scratch space for _title_overlap, reused by a page's blocks.
cdef struct Tokens:
    Span* spans
    Py_ssize_t n, cap
    Py_ssize_t* slots
    Py_ssize_t n_slots


cdef inline u64 _chars_hash(int kind, void* data, Py_ssize_t a, Py_ssize_t b) noexcept:
    cdef u64 h = 0xcbf29ce484222325ULL
    cdef Py_ssize_t i
    for i in range(a, b):
        h = (h ^ <u64>PyUnicode_READ(kind, data, i)) * FNV_PRIME
    return h


cdef inline bint _same_chars(int ka, void* da, Py_ssize_t a, int kb, void* db, Py_ssize_t b,
                             Py_ssize_t n) noexcept:
    cdef Py_ssize_t j
    for j in range(n):
        if <u64>PyUnicode_READ(ka, da, a + j) != <u64>PyUnicode_READ(kb, db, b + j):
            return False
    return True


cdef int _add_span(Tokens* t, Py_ssize_t start, Py_ssize_t end) except -1:
    cdef Span* grown
    if t.n == t.cap:
        t.cap = t.cap * 2 + 64
        grown = <Span*>realloc(t.spans, t.cap * sizeof(Span))
        if grown == NULL:
            raise MemoryError()
        t.spans = grown
    t.spans[t.n].start = start
    t.spans[t.n].end = end
    t.n += 1
    return 0


cdef double _title_overlap(Tokens* t, str low, list title, u64* title_h) except -1.0:
    """``len(toks & title_tokens) / max(1, len(toks))`` for the distinct
    tokens ``toks`` of ``low`` at ``t.spans``, without making a string or a
    set a token: an open-addressing table of spans, equal tokens found by
    hash and then compared character by character (exact)."""
    cdef Py_ssize_t m = 16, k, pos, other, length, distinct = 0, common = 0, j
    cdef Py_ssize_t* grown
    cdef int kind = PyUnicode_KIND(low)
    cdef void* data = PyUnicode_DATA(low)
    cdef u64 h
    cdef Span* sp
    cdef str word
    while m < 2 * t.n:
        m *= 2
    if m > t.n_slots:
        grown = <Py_ssize_t*>realloc(t.slots, m * sizeof(Py_ssize_t))
        if grown == NULL:
            raise MemoryError()
        t.slots = grown
        t.n_slots = m
    memset(t.slots, 0, m * sizeof(Py_ssize_t))
    for k in range(t.n):
        sp = &t.spans[k]
        length = sp.end - sp.start
        h = _chars_hash(kind, data, sp.start, sp.end)
        sp.h = h
        pos = h & (m - 1)
        while t.slots[pos]:
            other = t.slots[pos] - 1
            if (t.spans[other].h == h and t.spans[other].end - t.spans[other].start == length
                    and _same_chars(kind, data, t.spans[other].start, kind, data, sp.start, length)):
                break
            pos = (pos + 1) & (m - 1)
        if t.slots[pos]:
            continue  # seen before in this block
        t.slots[pos] = k + 1
        distinct += 1
        for j in range(len(title)):
            word = <str>title[j]
            if (title_h[j] == h and PyUnicode_GET_LENGTH(word) == length
                    and _same_chars(PyUnicode_KIND(word), PyUnicode_DATA(word), 0, kind, data,
                                    sp.start, length)):
                common += 1
                break
    return common / <double>max(1, distinct)


cdef array _DOUBLES = array("d")
cdef str _ENDS = '.!?"\u201d'


def block_table(object root, set skip, set near, frozenset block_tags, frozenset skip_tags,
                object hint_of, dict hint_cache, frozenset title_tokens, dict tag_index,
                Py_ssize_t n_tags, Py_ssize_t n_hints, object class_hides=None):
    """Content mode's blocks and their feature rows in one compiled pass:
    (blocks as (address, depth, hints, near, text, link characters, words, place, tag, text parts),
    the rows as one flat array of doubles), equal to ``_content.page_blocks_py``
    followed by ``_content.block_features``; None for namespaced trees.
    Python is called only for whitespace, case folding and title tokens."""
    raw = _walk_blocks(root, skip, near, block_tags, skip_tags, hint_of, hint_cache, class_hides)
    if raw is None:
        return None
    cdef Py_ssize_t n_raw = len(raw), n = 0, k, j, i, start, words, digits, total = 0
    # A row: 27 columns, the tags', the hints', 10 more of the block's own,
    # then _content.PAGE_COLUMNS (10) of its page and run.
    cdef Py_ssize_t base = 27 + n_tags + n_hints, width = base + 20, biggest = 0, second = -1, third = -1
    cdef Py_ssize_t head = -1, commas, stops, tokens, token_chars, cased, upper
    cdef Py_UCS4 before
    cdef dict siblings = {}, same_tag = {}
    cdef Stat* st = <Stat*>calloc(n_raw + 1, sizeof(Stat))
    cdef Py_UCS4 ch
    cdef bint in_word, ends
    cdef str text, low
    cdef const unsigned char* bp
    cdef unsigned char cls
    cdef Tokens toks
    cdef list title = sorted(title_tokens)
    cdef bint has_title = len(title) > 0
    cdef u64* title_h = NULL
    cdef list blocks = []
    cdef dict position = {}
    cdef dict tags = {}  # tag names by libxml2's (interned) name pointer
    cdef array X
    cdef double* row
    cdef double lw, ld, dist, in_main, max_words
    cdef xmlNode* main
    cdef xmlNode* node
    cdef xmlNode* other
    cdef const char* name
    cdef char* seen = NULL
    cdef Buf scratch
    scratch.data = NULL; scratch.len = 0; scratch.cap = 0
    toks.spans = NULL; toks.n = 0; toks.cap = 0; toks.slots = NULL; toks.n_slots = 0
    if st == NULL:
        raise MemoryError()
    try:
        title_h = <u64*>calloc(len(title) + 1, sizeof(u64))
        if title_h == NULL:
            raise MemoryError()
        for i in range(len(title)):
            word = title[i]
            title_h[i] = _chars_hash(PyUnicode_KIND(word), PyUnicode_DATA(word), 0,
                                     PyUnicode_GET_LENGTH(word))
        for b in raw:
            if _collapse_ascii(b[4], &scratch):
                # ASCII (most blocks): one pass over the bytes gives what the
                # two passes below give, lower case changing no character
                # class; the lower-case copy is made for the title only.
                text = PyUnicode_DecodeASCII(scratch.data, scratch.len, NULL)
                bp = <const unsigned char*>scratch.data
                words = digits = commas = stops = token_chars = cased = upper = 0
                in_word = False
                toks.n = 0
                before = 0
                for i in range(scratch.len):
                    ch = bp[i]
                    cls = _ASCII_CLASS[ch]
                    if cls == C_DIGIT:
                        digits += 1
                    if ch == 44:  # ","
                        commas += 1
                    elif ch == 32 and before == 46:  # ". "
                        stops += 1
                    if cls != 0 or ch == 95:
                        token_chars += 1
                        if not in_word:
                            in_word = True
                            start = i
                            words += 1
                            if cls & (C_UPPER | C_LOWER):
                                cased += 1
                                if cls == C_UPPER:
                                    upper += 1
                    elif in_word:
                        in_word = False
                        if has_title:
                            _add_span(&toks, start, i)
                    before = ch
                if not words:
                    continue
                if in_word and has_title:
                    _add_span(&toks, start, scratch.len)
                tokens = words
                ch = bp[scratch.len - 1]
                ends = ch == 46 or ch == 33 or ch == 63 or ch == 34  # _ENDS' ASCII: . ! ? "
                if has_title:
                    for i in range(scratch.len):
                        if 65 <= scratch.data[i] <= 90:
                            scratch.data[i] += 32
                    low = PyUnicode_DecodeASCII(scratch.data, scratch.len, NULL)
            else:
                text = " ".join(" ".join(b[4]).split())
                low = text.lower()
                words = 0
                in_word = False
                toks.n = 0
                i = 0
                for ch in low:  # _TOKEN (\w+) as re defines it: alphanumeric or "_"
                    if _word_char(ch):
                        if not in_word:
                            in_word = True
                            start = i
                            words += 1
                    elif in_word:
                        in_word = False
                        if has_title:
                            _add_span(&toks, start, i)
                    i += 1
                if not words:
                    continue
                if in_word and has_title:
                    _add_span(&toks, start, i)
                digits = commas = stops = tokens = token_chars = cased = upper = 0
                in_word = False
                before = 0
                for ch in text:  # the same tokens, in the text as written
                    if _decimal(ch):
                        digits += 1
                    if ch == 44:  # ","
                        commas += 1
                    elif ch == 32 and before == 46:  # ". "
                        stops += 1
                    if _word_char(ch):
                        token_chars += 1
                        if not in_word:
                            in_word = True
                            tokens += 1
                            if _alpha(ch):
                                cased += 1
                                if _upper(ch):
                                    upper += 1
                    else:
                        in_word = False
                    before = ch
                ends = text[len(text) - 1] in _ENDS
            st[n].node = <xmlNode*><size_t>b[0]
            st[n].depth = b[1]
            st[n].hints = b[2]
            st[n].near = b[3]
            st[n].links = b[5]
            st[n].words = words
            st[n].chars = len(text)
            st[n].digits = digits
            st[n].commas = commas
            st[n].stops = stops
            st[n].tokens = tokens
            st[n].token_chars = token_chars
            st[n].cased = cased
            st[n].upper = upper
            st[n].ends = ends
            st[n].overlap = _title_overlap(&toks, low, title, title_h) if has_title else 0.0
            st[n].place = b[6]
            position[b[0]] = n
            name = <const char*>st[n].node.name
            tag = tags.get(<size_t>name)
            if tag is None:
                tag = tags[<size_t>name] = name.decode("utf-8", "surrogatepass")
            blocks.append((b[0], b[1], b[2], b[3], text, b[5], words, b[6], tag, b[4]))
            total += words
            n += 1
        X = clone(_DOUBLES, n * width, True)
        if not n:
            return blocks, X
        # The three largest blocks (ties: the earlier first), as a stable sort.
        for k in range(n):
            if st[k].words > st[biggest].words:
                biggest = k
        for k in range(n):
            if k != biggest and (second < 0 or st[k].words > st[second].words):
                second = k
        for k in range(n):
            if k != biggest and k != second and (third < 0 or st[k].words > st[third].words):
                third = k
        max_words = st[biggest].words
        # The headline (see _content.block_features) and blocks per parent.
        for k in range(n):
            name = <const char*>st[k].node.name
            if (strcmp(name, "h1") == 0 or strcmp(name, "h2") == 0 or strcmp(name, "h3") == 0) \
                    and st[k].overlap >= 0.5:
                head = k
                break
        if head < 0:
            for k in range(n):
                if strcmp(<const char*>st[k].node.name, "h1") == 0:
                    head = k
                    break
        for k in range(n):
            key = <size_t>st[k].node.parent
            siblings[key] = siblings.get(key, 0) + 1
            key = (<size_t>st[k].node.parent, <bytes>(<const char*>st[k].node.name))
            same_tag[key] = same_tag.get(key, 0) + 1
        for k in range(n):
            st[k].siblings = siblings[<size_t>st[k].node.parent]
            st[k].same_tag = same_tag[(<size_t>st[k].node.parent, <bytes>(<const char*>st[k].node.name))]
        # _content._main_container: the highest of the common ancestors of the
        # largest block and each of the next two holding 30 % of its words.
        main = st[biggest].node
        for k in (second, third):
            if k >= 0 and st[k].words >= 0.3 * max_words and main != NULL:
                other = _common_ancestor(st[biggest].node, st[k].node)
                if other == NULL or _element_depth(other) < _element_depth(main):
                    main = other
        seen = <char*>calloc(n, 1)
        if seen == NULL:
            raise MemoryError()
        if main != NULL:  # mark the blocks inside it: one walk over its subtree
            node = main
            while node != NULL:
                if node.type == ELEMENT:
                    k = position.get(<size_t>node, -1)
                    if k >= 0:
                        seen[k] = 1
                node = next_node(node, main, True)
        row = X.data.as_doubles
        for k in range(n):
            lw = log1p(<double>st[k].words)
            ld = st[k].links / <double>max(1, st[k].chars)
            in_main = 1.0 if seen[k] else 0.0
            dist = (k - biggest) / <double>n
            row[0] = 1.0
            row[1] = lw
            row[2] = ld
            row[3] = ld * lw
            row[4] = k / <double>n
            row[5] = st[k].depth / 30.0
            row[6] = st[k].words / max_words
            if k:
                row[7] = log1p(<double>st[k - 1].words)
                row[8] = st[k - 1].links / <double>max(1, st[k - 1].chars)
                row[24] = 1.0 if st[k - 1].node.parent == st[k].node.parent else 0.0
            else:
                row[8] = 1.0
            if k + 1 < n:
                row[9] = log1p(<double>st[k + 1].words)
                row[10] = st[k + 1].links / <double>max(1, st[k + 1].chars)
            else:
                row[10] = 1.0
            row[11] = 1.0 if st[k].ends else 0.0
            row[12] = st[k].digits / <double>max(1, st[k].chars)
            row[13] = 1.0 if st[k].words < 4 else 0.0
            row[14] = in_main
            row[15] = dist
            row[16] = fabs(dist)
            row[17] = st[k].overlap
            row[18] = 1.0 if dist < 0 else 0.0
            row[19] = in_main * lw
            row[20] = lw * lw / 10
            row[21] = in_main * ld
            row[22] = 1.0 if k == biggest else 0.0
            row[23] = st[k].words / <double>max(1, total)
            row[25] = 1.0 if st[k].near else 0.0
            row[26] = row[25] * lw
            j = tag_index.get(<bytes>(<const char*>st[k].node.name), -1)
            if j >= 0:
                row[27 + j] = 1.0
            for j in range(n_hints):
                if st[k].hints >> j & 1:
                    row[27 + n_tags + j] = 1.0
            if head >= 0:
                row[base] = 1.0
                row[base + 1] = (k - head) / <double>n
                row[base + 2] = 1.0 if k > head else 0.0
                row[base + 3] = 1.0 if k == head else 0.0
            row[base + 4] = st[k].commas / <double>st[k].words
            row[base + 5] = st[k].token_chars / <double>max(1, st[k].tokens)
            row[base + 6] = st[k].upper / <double>max(1, st[k].cased)
            row[base + 7] = st[k].stops / <double>st[k].words
            row[base + 8] = log1p(<double>st[k].siblings)
            row[base + 9] = st[k].same_tag / <double>st[k].siblings
            row += width
        _page_columns(st, n, X.data.as_doubles, width, base + 10, total)
        return blocks, X
    finally:
        free(st)
        free(seen)
        free(toks.spans)
        free(toks.slots)
        free(title_h)
        free(scratch.data)


cdef int _page_columns(Stat* st, Py_ssize_t n, double* X, Py_ssize_t width, Py_ssize_t at,
                       Py_ssize_t total) except -1:
    """_content.page_columns into columns ``at``.. of each row: the page's
    blocks, link density, largest block's and prose blocks' share of its
    words, share of list items, words; the block's run (the blocks of its
    place, ``st[k].place``): blocks, share of words, link density, largest.
    Runs are numbered in page order through a table of place hashes (C
    arrays: a dict of lists of Python ints cost a Python object a sum)."""
    cdef Py_ssize_t k, r, chars = 0, links = 0, prose = 0, lists = 0, max_words = 0, top = 0, n_runs = 0
    cdef Py_ssize_t slots = 16, at_slot
    cdef Py_ssize_t* slot = NULL  # run number + 1 by hash slot, 0: empty
    cdef Py_ssize_t* run_of = NULL  # each block's run
    cdef Py_ssize_t* runs = NULL  # each run: blocks, words, links, chars
    cdef u64* place = NULL  # each run's place hash
    cdef double* row
    cdef double page_ld, big, prose_share, list_share, log_n, log_total
    while slots < 2 * n:
        slots *= 2
    slot = <Py_ssize_t*>calloc(slots, sizeof(Py_ssize_t))
    run_of = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
    runs = <Py_ssize_t*>calloc(4 * n, sizeof(Py_ssize_t))
    place = <u64*>malloc(n * sizeof(u64))
    try:
        if slot == NULL or run_of == NULL or runs == NULL or place == NULL:
            raise MemoryError()
        for k in range(n):
            chars += st[k].chars
            links += st[k].links
            if st[k].words >= 30:
                prose += st[k].words
            if st[k].words > max_words:
                max_words = st[k].words
            if strcmp(<const char*>st[k].node.name, "li") == 0:
                lists += 1
            at_slot = <Py_ssize_t>((st[k].place * <u64>11400714819323198485ULL) >> 32) & (slots - 1)
            while slot[at_slot] and place[slot[at_slot] - 1] != st[k].place:
                at_slot = (at_slot + 1) & (slots - 1)
            if not slot[at_slot]:  # a new run, numbered in page order
                place[n_runs] = st[k].place
                n_runs += 1
                slot[at_slot] = n_runs
            r = slot[at_slot] - 1
            run_of[k] = r
            runs[4 * r] += 1
            runs[4 * r + 1] += st[k].words
            runs[4 * r + 2] += st[k].links
            runs[4 * r + 3] += st[k].chars
        for r in range(1, n_runs):  # the first of the largest, in page order
            if runs[4 * r + 1] > runs[4 * top + 1]:
                top = r
        log_n = log1p(<double>n)
        page_ld = links / <double>max(1, chars)
        big = max_words / <double>total
        prose_share = prose / <double>total
        list_share = lists / <double>n
        log_total = log1p(<double>total)
        for k in range(n):
            row = X + k * width + at
            r = run_of[k]
            row[0] = log_n
            row[1] = page_ld
            row[2] = big
            row[3] = prose_share
            row[4] = list_share
            row[5] = log_total
            row[6] = log1p(<double>runs[4 * r])
            row[7] = runs[4 * r + 1] / <double>total
            row[8] = runs[4 * r + 2] / <double>max(1, runs[4 * r + 3])
            row[9] = 1.0 if r == top else 0.0
        return 0
    finally:
        free(slot)
        free(run_of)
        free(runs)
        free(place)


def score_table(const double[::1] X, Py_ssize_t width, const int[::1] feature, const double[::1] threshold,
                const int[::1] left, const int[::1] right, const double[::1] value, const int[::1] roots,
                double base, bint probabilities=False):
    """``score_trees`` over ``block_table``'s flat rows of ``width`` doubles;
    ``probabilities``: each passed through ``_content._sigmoid`` (the same
    operations on the same libm ``exp``: the same doubles)."""
    cdef Py_ssize_t n = X.shape[0] // width if width > 0 else 0, r, t, i
    cdef Py_ssize_t ntrees = roots.shape[0]
    cdef array scores = clone(_DOUBLES, n, False)
    cdef double* out = scores.data.as_doubles
    for i in range(feature.shape[0]):  # rows are read unchecked below
        if feature[i] >= width:
            raise IndexError(f"rows have {width} features; the trees read feature {feature[i]}")
    # Only C data from here: other threads (Scrapy's reactor) run meanwhile.
    # Tree by tree, four rows at a time: each walk is a chain of dependent
    # loads, and four independent chains keep the core busy (0.79 -> 0.3 ms
    # for 401 rows of 200 trees). Each row still adds base and then the
    # trees' leaves in tree order: the same sums, bit for bit.
    cdef const int* f = &feature[0] if feature.shape[0] else NULL
    cdef const double* th = &threshold[0] if threshold.shape[0] else NULL
    cdef const int* lt = &left[0] if left.shape[0] else NULL
    cdef const int* rt = &right[0] if right.shape[0] else NULL
    cdef const double* val = &value[0] if value.shape[0] else NULL
    cdef const double* x0
    cdef const double* x1
    cdef const double* x2
    cdef const double* x3
    cdef int a, b, c, d, root
    cdef double z
    cdef Py_ssize_t quads = n - n % 4
    with nogil:
        for r in range(n):
            out[r] = base
        for t in range(ntrees):
            root = roots[t]
            for r in range(0, quads, 4):
                x0 = &X[r * width]
                x1 = x0 + width
                x2 = x1 + width
                x3 = x2 + width
                a = b = c = d = root
                while lt[a] >= 0 or lt[b] >= 0 or lt[c] >= 0 or lt[d] >= 0:
                    if lt[a] >= 0:
                        a = lt[a] if x0[f[a]] <= th[a] else rt[a]
                    if lt[b] >= 0:
                        b = lt[b] if x1[f[b]] <= th[b] else rt[b]
                    if lt[c] >= 0:
                        c = lt[c] if x2[f[c]] <= th[c] else rt[c]
                    if lt[d] >= 0:
                        d = lt[d] if x3[f[d]] <= th[d] else rt[d]
                out[r] += val[a]
                out[r + 1] += val[b]
                out[r + 2] += val[c]
                out[r + 3] += val[d]
            for r in range(quads, n):
                x0 = &X[r * width]
                a = root
                while lt[a] >= 0:
                    a = lt[a] if x0[f[a]] <= th[a] else rt[a]
                out[r] += val[a]
        if probabilities:
            for r in range(n):
                z = out[r]
                if z > 30.0:
                    z = 30.0
                elif z < -30.0:
                    z = -30.0
                out[r] = 1.0 / (1.0 + exp(-z))
    return scores.tolist()


cdef struct NodeMap:
    size_t* keys  # node addresses (0: empty slot)
    Py_ssize_t* values
    Py_ssize_t cap, used


cdef inline Py_ssize_t _slot(NodeMap* m, size_t key) noexcept nogil:
    """Where ``key`` is in ``m``, or the empty slot where it would go."""
    cdef size_t i = ((key >> 4) * <size_t>11400714819323198485ULL) & <size_t>(m.cap - 1)
    while m.keys[i] != 0 and m.keys[i] != key:
        i = (i + 1) & <size_t>(m.cap - 1)
    return i


cdef int _map_grow(NodeMap* m) noexcept nogil:
    cdef NodeMap bigger
    cdef Py_ssize_t i, at
    bigger.cap = m.cap * 2
    bigger.used = m.used
    bigger.keys = <size_t*>calloc(bigger.cap, sizeof(size_t))
    bigger.values = <Py_ssize_t*>malloc(bigger.cap * sizeof(Py_ssize_t))
    if bigger.keys == NULL or bigger.values == NULL:
        free(bigger.keys)
        free(bigger.values)
        return -1
    for i in range(m.cap):
        if m.keys[i] != 0:
            at = _slot(&bigger, m.keys[i])
            bigger.keys[at] = m.keys[i]
            bigger.values[at] = m.values[i]
    free(m.keys)
    free(m.values)
    m[0] = bigger
    return 0


def block_tree(list addresses):
    """``_content.block_tree`` from the blocks' node addresses: the same
    numbers, walking libxml2's parent pointers with a C hash of node
    addresses instead of making an element proxy for each block and
    ancestor."""
    cdef NodeMap m
    cdef size_t* new = NULL
    cdef size_t* grown_new
    cdef Py_ssize_t* parents = NULL
    cdef Py_ssize_t* grown
    cdef Py_ssize_t n_new, cap_new = 64, count = 0, cap_parents = 256, up, i, at
    cdef xmlNode* node
    cdef list nodes = []
    m.cap = 256
    m.used = 0
    m.keys = <size_t*>calloc(m.cap, sizeof(size_t))
    m.values = <Py_ssize_t*>malloc(m.cap * sizeof(Py_ssize_t))
    new = <size_t*>malloc(cap_new * sizeof(size_t))
    parents = <Py_ssize_t*>malloc(cap_parents * sizeof(Py_ssize_t))
    try:
        if m.keys == NULL or m.values == NULL or new == NULL or parents == NULL:
            raise MemoryError()
        for a in addresses:
            node = <xmlNode*><size_t>a
            if node == NULL or node.type != ELEMENT:
                raise ValueError("block_tree: a block that is not an element")
            n_new = 0
            up = -1
            while node != NULL and node.type == ELEMENT:
                at = _slot(&m, <size_t>node)
                if m.keys[at] != 0:
                    up = m.values[at]
                    break
                if n_new == cap_new:
                    grown_new = <size_t*>realloc(new, 2 * cap_new * sizeof(size_t))
                    if grown_new == NULL:
                        raise MemoryError()
                    new, cap_new = grown_new, 2 * cap_new
                new[n_new] = <size_t>node
                n_new += 1
                node = node.parent
            for i in range(n_new - 1, -1, -1):
                if 2 * (m.used + 1) > m.cap and _map_grow(&m) < 0:
                    raise MemoryError()
                if count == cap_parents:
                    grown = <Py_ssize_t*>realloc(parents, 2 * cap_parents * sizeof(Py_ssize_t))
                    if grown == NULL:
                        raise MemoryError()
                    parents, cap_parents = grown, 2 * cap_parents
                at = _slot(&m, new[i])
                m.keys[at] = new[i]
                m.values[at] = count
                m.used += 1
                parents[count] = up
                up = count
                count += 1
            if n_new:
                nodes.append(up)  # the block's own element, numbered last
            else:
                nodes.append(m.values[_slot(&m, <size_t>a)])
        return nodes, [parents[i] for i in range(count)]
    finally:
        free(m.keys)
        free(m.values)
        free(new)
        free(parents)


def container_cut(list scores, list words, list link_density, list nodes, list parents,
                  double outside, double power):
    """``_content.container_cut_py`` in C: the same arithmetic in the same
    order, so the same doubles."""
    cdef Py_ssize_t n = len(scores), count = len(parents), i, e, up, best = -1
    cdef double total = 0.0, m, f, best_f = -1.0
    cdef double* mass
    cdef double* held
    cdef Py_ssize_t* parent
    cdef Py_ssize_t* node
    cdef char* inside
    if n < 2:
        return scores
    if len(words) != n or len(link_density) != n or len(nodes) != n:
        raise ValueError("container_cut: lists of different lengths")
    mass = <double*>calloc(count + 1, sizeof(double))
    held = <double*>calloc(count + 1, sizeof(double))
    parent = <Py_ssize_t*>malloc((count + 1) * sizeof(Py_ssize_t))
    node = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
    inside = <char*>calloc(count + 1, 1)
    try:
        if mass == NULL or held == NULL or parent == NULL or node == NULL or inside == NULL:
            raise MemoryError()
        for e in range(count):
            up = parents[e]
            if up >= e or up < -1:
                raise ValueError("container_cut: a parent must come before its children")
            parent[e] = up
        for i in range(n):
            e = nodes[i]
            if e < 0 or e >= count:
                raise ValueError("container_cut: node out of range")
            node[i] = e
            m = <double>scores[i] * <double>words[i] * pow(1.0 - <double>link_density[i], power)
            total += m
            mass[e] += m
            held[e] += <double>words[i]
        if total <= 0.0:
            return scores
        for e in range(count - 1, 0, -1):
            up = parent[e]
            if up >= 0:
                mass[up] += mass[e]
                held[up] += held[e]
        for e in range(count):
            f = 2.0 * mass[e] / (held[e] + total)
            if f > best_f:
                best, best_f = e, f
        for e in range(count):
            inside[e] = e == best or (parent[e] >= 0 and inside[parent[e]])
        return [scores[i] if inside[node[i]] else scores[i] * outside for i in range(n)]
    finally:
        free(mass)
        free(held)
        free(parent)
        free(node)
        free(inside)


# Content mode's clean_html (_content_html.content_html_py), compiled.
# Tag classes as _content_html._tag_bits writes them: flags in bits 0-18,
# then fields (see there).
cdef enum:
    K_BLOCK = 1 << 0
    K_SKIP = 1 << 1
    K_WRAPPER = 1 << 2
    K_INLINE = 1 << 3
    K_UNWRITTEN = 1 << 4
    K_VOID = 1 << 5
    K_DROP_EMPTY = 1 << 6
    K_OPENED = 1 << 7
    K_PLAIN = 1 << 8
    K_HEADING = 1 << 9
    K_A = 1 << 10
    K_IMG = 1 << 11
    K_PICTURE = 1 << 12
    K_FIGURE = 1 << 13
    K_PRE = 1 << 14
    K_TABLE = 1 << 15
    K_BR = 1 << 16
    K_HTML_BODY = 1 << 17
    K_TABLE_CHILD = 1 << 18


cdef inline int _cleared(u64 bits) noexcept nogil:
    return <int>(bits >> 20 & 15)


cdef inline int _set_bits(u64 bits) noexcept nogil:
    return <int>(bits >> 24 & 15)


cdef inline int _blocked_by(u64 bits) noexcept nogil:
    return <int>(bits >> 28 & 15)


cdef inline int _around_code(u64 bits) noexcept nogil:
    return <int>(bits >> 32 & 7)


cdef inline int _needs_around(u64 bits) noexcept nogil:
    return <int>(bits >> 35 & 127)


cdef inline int _refuses_around(u64 bits) noexcept nogil:
    return <int>(bits >> 42 & 127)


cdef inline int _child_code(u64 bits) noexcept nogil:
    return <int>(bits >> 49 & 7)


cdef inline int _takes_children(u64 bits) noexcept nogil:
    return <int>(bits >> 52 & 255)


cdef int _map_init(NodeMap* m) noexcept nogil:
    m.cap = 64
    m.used = 0
    m.keys = <size_t*>calloc(m.cap, sizeof(size_t))
    m.values = <Py_ssize_t*>malloc(m.cap * sizeof(Py_ssize_t))
    return 0 if m.keys != NULL and m.values != NULL else -1


cdef inline bint _map_has(NodeMap* m, size_t key) noexcept nogil:
    return m.keys[_slot(m, key)] != 0


cdef int _map_put(NodeMap* m, size_t key, Py_ssize_t value) except -1:
    cdef Py_ssize_t at
    if 2 * (m.used + 1) > m.cap and _map_grow(m) < 0:
        raise MemoryError()
    at = _slot(m, key)
    if m.keys[at] == 0:
        m.keys[at] = key
        m.used += 1
    m.values[at] = value
    return 0


cdef int _tag_of(xmlNode* node, NodeMap* names, dict tag_bits, u64* bits) except -1:
    """The tag's classes (``_content_html._TAG_BITS``), cached by libxml2's
    name pointer; 0 for a namespaced element (its tag, ``{uri}name``, is
    in none of the sets)."""
    cdef Py_ssize_t at
    if node.ns != NULL or node.name == NULL:
        bits[0] = 0
        return 0
    at = _slot(names, <size_t>node.name)
    if names.keys[at] != 0:
        bits[0] = <u64>names.values[at]
        return 0
    value = tag_bits.get(<bytes>(<const char*>node.name))
    bits[0] = 0 if value is None else <u64>value
    _map_put(names, <size_t>node.name, <Py_ssize_t>bits[0])
    return 0


cdef int _run(xmlNode* c, Buf* scratch, const char** text, Py_ssize_t* n) except -1:
    """lxml's ``.text`` / ``.tail`` as UTF-8: the run of text and CDATA
    nodes from ``c``, the node's own content when alone, else joined into
    ``scratch``; ``n`` is 0 when there is none or it is empty."""
    cdef const char* content
    n[0] = 0
    text[0] = NULL
    if c == NULL or (c.type != TEXT and c.type != CDATA):
        return 0
    if c.next == NULL or (c.next.type != TEXT and c.next.type != CDATA):
        if c.content != NULL:
            text[0] = <const char*>c.content
            n[0] = strlen(text[0])
        return 0
    scratch.len = 0
    while c != NULL and (c.type == TEXT or c.type == CDATA):
        content = <const char*>c.content
        if content != NULL:
            add(scratch, content, strlen(content))
        c = c.next
    add1(scratch, 0)  # NUL-terminated, as libxml2's strings are (_add_escaped)
    scratch.len -= 1
    text[0] = scratch.data
    n[0] = scratch.len
    return 0


cdef bint _all_space(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """``str.isspace`` of UTF-8 text (False when empty)."""
    cdef Py_ssize_t i = 0, k
    if n == 0:
        return False
    while i < n:
        k = space_len(p + i, n - i)
        if k == 0:
            return False
        i += k
    return True


cdef inline bint _html_space(unsigned char c) noexcept nogil:
    """HTML's white space (``_content_html._SPACE``)."""
    return c == 32 or c == 9 or c == 10 or c == 13 or c == 12


cdef int _has_word(const char* p, Py_ssize_t n) except -1:
    """Whether UTF-8 text holds a ``\\w`` character (``re``'s)."""
    cdef Py_ssize_t i
    cdef bint wide = False
    cdef unsigned char c
    cdef str text
    for i in range(n):
        c = <unsigned char>p[i]
        if c >= 128:
            wide = True
        elif _ASCII_CLASS[c] != 0 or c == 95:
            return True
    if wide:
        text = p[:n].decode("utf-8", "surrogatepass")
        for ch in text:
            if _word_char(ch):
                return True
    return False


cdef int _add_escaped(Buf* b, const char* p, Py_ssize_t n, bint quote) except -1:
    """``html.escape(text, quote)`` of UTF-8 text into ``b``. ``p`` must be
    NUL-terminated at or after ``n`` (libxml2's strings, ``_run``'s
    scratch, bytes objects): the runs to copy are found by libc's
    ``strcspn`` (vectorised; a loop over the bytes was 3 % of the CLI's
    instructions)."""
    cdef Py_ssize_t done = 0, k
    cdef const char* stops = "&<>\"'" if quote else "&<>"
    cdef char c
    grow(b, n)
    while done < n:
        k = strcspn(p + done, stops)
        if k > n - done:
            k = n - done
        add(b, p + done, k)
        done += k
        if done == n:
            break
        c = p[done]
        if c == b'&':
            add(b, "&amp;", 5)
        elif c == b'<':
            add(b, "&lt;", 4)
        elif c == b'>':
            add(b, "&gt;", 4)
        elif c == b'"':
            add(b, "&quot;", 6)
        elif c == b"'":
            add(b, "&#x27;", 6)
        else:  # a NUL inside the text: kept, as html.escape keeps it
            add1(b, c)
        done += 1
    return 0


cdef int _write_run(Buf* out, Buf* scratch, xmlNode* c, bint raw, Py_ssize_t* last) except -1:
    """The text of the run from ``c`` as content_html_py writes it: as it
    is inside a ``<pre>``; else one space for white space alone, white
    space at its ends cut to one space. ``last``: the length of ``out``
    after the last text shown."""
    cdef const char* p
    cdef Py_ssize_t n, i, j
    _run(c, scratch, &p, &n)
    if n == 0:
        return 0
    if raw:
        _add_escaped(out, p, n, False)
        if not _all_space(<const unsigned char*>p, n):
            last[0] = out.len
    elif _all_space(<const unsigned char*>p, n):
        add1(out, 32)
    else:  # white space alone is handled above: something is left between the ends
        i = 0
        j = n
        if _html_space(<unsigned char>p[0]):
            add1(out, 32)
            while _html_space(<unsigned char>p[i]):
                i += 1
        while _html_space(<unsigned char>p[j - 1]):
            j -= 1
        _add_escaped(out, p + i, j - i, False)
        if j < n:
            add1(out, 32)
        last[0] = out.len
    return 0


cdef int _start_tag(Buf* out, Buf* scratch, xmlNode* node, u64 bits, dict attributes, object urls,
                    dict seen, NodeMap* names) except -1:
    """``_content_html._start_tag`` into ``out``: 1, or 0 (nothing written)
    for a link without a usable target or an image without source or
    text. ``urls(value)`` makes a URL absolute (None: unsafe); ``seen`` is
    its cache, read here first (a page repeats its links). ``names``
    caches ``attributes`` by attribute name pointer (0: not written, 1: as
    it is, 2: a URL)."""
    cdef Py_ssize_t start = out.len, n, at, kind
    cdef tree.xmlAttr* attr = node.properties
    cdef tree.xmlAttr* a
    cdef bint href = False, src = False, alt = False
    cdef const char* name
    cdef const char* p
    cdef bytes value
    add1(out, b'<')
    add(out, <const char*>node.name, strlen(<const char*>node.name))
    while attr != NULL:
        a = attr
        attr = attr.next
        if a.ns != NULL:
            continue  # "{uri}name": not among ATTRIBUTES
        name = <const char*>a.name
        at = _slot(names, <size_t>name)  # by libxml2's interned name: no bytes object an attribute
        if names.keys[at] != 0:
            kind = names.values[at]
        else:
            is_url = attributes.get(<bytes>name)
            kind = 0 if is_url is None else 2 if is_url else 1
            _map_put(names, <size_t>name, kind)
        if kind == 0:
            continue
        if kind == 2:
            raw = _run_text(a.children)
            got = seen.get(raw)
            if got is None:
                got = urls(raw)
            if got is None:
                continue
            value = (<str>got).encode("utf-8", "surrogatepass")
            p = value
            n = len(value)
        else:
            _run(a.children, scratch, &p, &n)
        add1(out, 32)
        add(out, name, strlen(name))
        add(out, '="', 2)
        _add_escaped(out, p, n, True)
        add1(out, b'"')
        if strcmp(name, "href") == 0:
            href = True
        elif strcmp(name, "src") == 0:
            src = True
        elif strcmp(name, "alt") == 0 and n > 0:
            alt = True
    if (bits & K_A and not href) or (bits & K_IMG and not (src or alt)):
        out.len = start
        return 0
    if bits & K_OPENED:
        add(out, " open", 5)
    add1(out, b'>')
    return 1


cdef int _table_part(xmlNode* el, NodeMap* holds, NodeMap* broken, NodeMap* names, dict tag_bits,
                     Buf* scratch) except -1:
    """One element of ``_content_html._broken_tables``' loop: its table,
    if any, is broken when a browser would move the element, or (a kept
    table part) its own text or another element beside its rows or cells,
    out of it."""
    cdef xmlNode* parent = el.parent
    cdef xmlNode* c
    cdef u64 bits, other
    cdef bint bad = False
    cdef int inside, allowed
    cdef const char* p
    cdef Py_ssize_t n
    if parent != NULL and parent.type != ELEMENT:
        parent = NULL
    _tag_of(el, names, tag_bits, &bits)
    if parent != NULL:
        _tag_of(parent, names, tag_bits, &other)
        inside = _takes_children(other)
        bad = inside != 0 and not (bits & K_TABLE_CHILD and inside >> _child_code(bits) & 1)
    allowed = _takes_children(bits)
    if not bad and allowed != 0 and not _map_has(holds, <size_t>el):
        _run(el.children, scratch, &p, &n)
        bad = n > 0 and not _all_space(<const unsigned char*>p, n)
        c = el.children
        while not bad and c != NULL:
            if c.type == ELEMENT:
                _tag_of(c, names, tag_bits, &other)
                if not (other & K_TABLE_CHILD and allowed >> _child_code(other) & 1):
                    bad = True
                else:
                    _run(c.next, scratch, &p, &n)
                    bad = n > 0 and not _all_space(<const unsigned char*>p, n)
            elif c.type == COMMENT or c.type == PI or c.type == 5:  # and entity references: not a tag
                bad = True
            c = c.next
        parent = el
    if bad:
        while parent != NULL and parent.type == ELEMENT:
            _tag_of(parent, names, tag_bits, &other)
            if other & K_TABLE:
                _map_put(broken, <size_t>parent, 1)
                break
            parent = parent.parent
    return 0


cdef int _hidden_left_out(list kept, NodeMap* skips, NodeMap* names, dict tag_bits, object class_hides,
                          Buf* scratch) except -1:
    """``_content_html._hidden_left_out`` with ``_content._is_hidden``."""
    cdef xmlNode* el = NULL
    cdef xmlNode* node
    cdef u64 bits
    cdef bint down = True
    cdef const char* p
    cdef Py_ssize_t n
    for a in kept:
        node = <xmlNode*><size_t>a
        _tag_of(node, names, tag_bits, &bits)
        if not bits & K_PRE:
            el = node
            break
    if el == NULL:
        return True  # <pre>s only: the same output either way
    node = el
    while node != NULL and node.type == ELEMENT:
        _tag_of(node, names, tag_bits, &bits)
        if not bits & K_HTML_BODY and node.properties != NULL and _hidden(node, class_hides):
            return False
        node = node.parent
    node = el
    while True:  # start and end events only: comments and their tails unseen
        if down and node.type == ELEMENT:
            if node != el:
                _tag_of(node, names, tag_bits, &bits)
                if (bits & (K_SKIP | K_BLOCK) or _map_has(skips, <size_t>node)
                        or (node.properties != NULL and _hidden(node, class_hides))):
                    down = False  # not entered; its tail still counts
            if down:
                _run(node.children, scratch, &p, &n)
                if n and _has_word(p, n):
                    return True
                if node.children != NULL:
                    node = node.children
                    continue
                down = False
        if not down and node != el:
            _run(node.next, scratch, &p, &n)
            if n and _has_word(p, n):
                return True
        if not step(&node, el, &down):
            break
    return False


cdef struct HFrame:
    xmlNode* written  # the element whose end tag is written at its end, or NULL
    u64 bits
    Py_ssize_t start, body  # the output's length before and after its start tag
    int owner, around, opened
    bint raw, shown


def content_body(object root, list kept, object skip, object class_hides, object urls, dict tag_bits,
                 dict attributes):
    """The body of ``_content_html.content_html_py``'s page (what it joins
    from ``out``) for the ``kept`` elements, leaving out the subtrees of
    the elements in ``skip`` (an iterable), hiding
    what ``_content._is_hidden`` hides when ``class_hides`` (its class
    test) is given; ``urls`` is the page's ``_content_html._Urls`` (its
    cache ``seen`` read here first), ``tag_bits`` its ``_TAG_BITS`` and
    ``attributes`` ``_ATTRIBUTE_URLS``.
    One iterative walk over libxml2's nodes, written as UTF-8 and decoded
    once: the Python walk's per-node work (iterwalk's proxies, the frame
    tuples, a string a part) was a quarter of content mode on pages
    without a site model."""
    cdef cetree._Element top = <cetree._Element?>root
    cdef xmlNode* c_root = top._c_node
    cdef xmlNode* node = c_root
    cdef xmlNode* parent
    cdef NodeMap kept_set, holds, skips, broken, names, attr_names
    cdef Buf out, scratch
    cdef HFrame* frames = NULL
    cdef HFrame* grown
    cdef HFrame* f
    cdef Py_ssize_t depth = 0, cap = 256, last = 0, i, start
    cdef bint down = True, hide = class_hides is not None, write, enter, has_attrs, raw, shown, spaced
    cdef int owner, around, opened
    cdef u64 bits
    cdef size_t address
    cdef list nodes = [<size_t>(<cetree._Element?>e)._c_node for e in kept]
    cdef dict seen = urls.seen
    out.data = NULL; out.len = 0; out.cap = 0
    scratch.data = NULL; scratch.len = 0; scratch.cap = 0
    kept_set.keys = NULL; kept_set.values = NULL
    holds.keys = NULL; holds.values = NULL
    skips.keys = NULL; skips.values = NULL
    broken.keys = NULL; broken.values = NULL
    names.keys = NULL; names.values = NULL
    attr_names.keys = NULL; attr_names.values = NULL
    try:
        if (_map_init(&kept_set) < 0 or _map_init(&holds) < 0 or _map_init(&skips) < 0
                or _map_init(&broken) < 0 or _map_init(&names) < 0 or _map_init(&attr_names) < 0):
            raise MemoryError()
        frames = <HFrame*>malloc(cap * sizeof(HFrame))
        if frames == NULL:
            raise MemoryError()
        for a in nodes:
            _map_put(&kept_set, <size_t>a, 1)
        for a in nodes:  # their ancestors: shared ones once
            parent = (<xmlNode*><size_t>a).parent
            while parent != NULL and parent.type == ELEMENT and not _map_has(&holds, <size_t>parent):
                _map_put(&holds, <size_t>parent, 1)
                parent = parent.parent
        for e in skip:
            _map_put(&skips, <size_t>(<cetree._Element?>e)._c_node, 1)
        for a in nodes:
            _table_part(<xmlNode*><size_t>a, &holds, &broken, &names, tag_bits, &scratch)
        for i in range(holds.cap):
            if holds.keys[i] != 0:
                _table_part(<xmlNode*>holds.keys[i], &holds, &broken, &names, tag_bits, &scratch)
        if hide and not _hidden_left_out(nodes, &skips, &names, tag_bits, class_hides, &scratch):
            hide = False
        frames[0].written = NULL
        frames[0].bits = 0
        frames[0].start = frames[0].body = 0
        frames[0].owner = frames[0].around = frames[0].opened = 0
        frames[0].raw = frames[0].shown = False
        depth = 1
        node = c_root
        while True:
            if down and node.type == ELEMENT:
                if depth == cap:
                    grown = <HFrame*>realloc(frames, 2 * cap * sizeof(HFrame))
                    if grown == NULL:
                        raise MemoryError()
                    frames, cap = grown, 2 * cap
                f = &frames[depth - 1]
                owner, raw, shown, around, opened = f.owner, f.raw, f.shown, f.around, f.opened
                _tag_of(node, &names, tag_bits, &bits)
                has_attrs = node.properties != NULL
                address = <size_t>node
                enter = True
                write = False
                if _map_has(&kept_set, address):
                    owner = 1
                    shown = hide and not bits & K_PRE
                    write = bits & K_BLOCK and not bits & K_UNWRITTEN
                elif _map_has(&holds, address):
                    if bits & K_BLOCK:
                        owner = 2 if bits & K_FIGURE else 0
                    write = bits & K_WRAPPER
                elif owner == 1:
                    if (bits & K_BLOCK and not bits & K_BR) or bits & K_SKIP or _map_has(&skips, address):
                        enter = False
                    elif has_attrs and shown and _hidden(node, class_hides):
                        enter = False
                    else:
                        write = bits & K_INLINE
                elif (owner == 2 and bits & (K_IMG | K_A | K_PICTURE) and not _map_has(&skips, address)
                      and not (hide and has_attrs and _hidden(node, class_hides))):
                    write = not bits & K_PICTURE
                else:
                    enter = False
                f = &frames[depth]
                depth += 1
                if not enter:
                    f.written = NULL
                    f.owner = -1
                    down = False
                else:
                    start = out.len
                    f.written = NULL
                    if write and (opened & _blocked_by(bits)
                                  or (_needs_around(bits) and not _needs_around(bits) >> around & 1)
                                  or (bits & K_TABLE and _map_has(&broken, address))
                                  or _refuses_around(bits) >> around & 1):
                        write = False
                    if write:
                        if not has_attrs and bits & K_PLAIN:
                            add1(&out, b'<')
                            add(&out, <const char*>node.name, strlen(<const char*>node.name))
                            add1(&out, b'>')
                            write = True
                        else:
                            write = _start_tag(&out, &scratch, node, bits, attributes, urls, seen, &attr_names)
                        if write:
                            if bits & K_VOID:
                                last = out.len
                            else:
                                f.written = node
                                around = _around_code(bits)
                                opened = (opened & ~_cleared(bits)) | _set_bits(bits)
                    if bits & K_PRE:
                        raw = True
                    f.bits = bits
                    f.start = start
                    f.body = out.len
                    f.owner, f.raw, f.shown, f.around, f.opened = owner, raw, shown, around, opened
                    if owner == 1:
                        _write_run(&out, &scratch, node.children, raw, &last)
                    if node.children != NULL:
                        node = node.children
                        continue
                    down = False
            elif down and (node.type == COMMENT or node.type == PI):
                f = &frames[depth - 1]  # not entered; the text after it is its parent's
                if f.owner == 1:
                    _write_run(&out, &scratch, node.next, f.raw, &last)
            if not down:  # leaving an element
                depth -= 1
                f = &frames[depth]
                if f.written != NULL:
                    if last <= f.start and f.bits & K_DROP_EMPTY:  # nothing shown inside
                        spaced = out.len > f.body
                        out.len = f.start
                        if spaced:
                            add1(&out, 32)
                    else:
                        add(&out, "</", 2)
                        add(&out, <const char*>f.written.name, strlen(<const char*>f.written.name))
                        add1(&out, b'>')
                f = &frames[depth - 1]
                if f.owner == 1:
                    _write_run(&out, &scratch, node.next, f.raw, &last)
            if not step(&node, c_root, &down):
                break
        return PyUnicode_DecodeUTF8(out.data, out.len, "surrogatepass")  # no bytes object in between
    finally:
        free(out.data)
        free(scratch.data)
        free(frames)
        free(kept_set.keys); free(kept_set.values)
        free(holds.keys); free(holds.values)
        free(skips.keys); free(skips.values)
        free(broken.keys); free(broken.values)
        free(names.keys); free(names.values)
        free(attr_names.keys); free(attr_names.values)


# The page's headline (_title) and content mode's page checks (_content).
cdef enum:
    S_UNSEEN = 1  # _title._UNSEEN: text no reader sees
    S_BREAK = 2  # _title._BREAKS: ends a line


cdef inline bint _named(xmlNode* node, const char* name) noexcept nogil:
    """An element whose tag is ``name`` without a namespace (lxml's
    ``iter(name)``); the first letters compared before calling strcmp."""
    return (node.type == ELEMENT and node.ns == NULL and node.name != NULL and node.name[0] == name[0]
            and strcmp(<const char*>node.name, name) == 0)


cdef int _seen_text(xmlNode* el, NodeMap* names, dict tag_bits, object class_hides, Buf* out,
                    Buf* scratch) except -1:
    """``_title._seen_text`` before its white space is collapsed, as UTF-8
    into ``out``: start and end events only (comments and their tails
    unseen), unseen and hidden elements left out but their tails."""
    cdef xmlNode* node = el
    cdef bint down = True
    cdef u64 bits
    cdef const char* p
    cdef Py_ssize_t n
    while True:
        if down and node.type == ELEMENT:
            _tag_of(node, names, tag_bits, &bits)
            if node != el and (bits & S_UNSEEN or (node.properties != NULL and _hidden(node, class_hides))):
                down = False  # not entered; its end still comes, with its tail
            else:
                if bits & S_BREAK:
                    add1(out, 32)
                _run(node.children, scratch, &p, &n)
                add(out, p, n)
                if node.children != NULL:
                    node = node.children
                    continue
                down = False
        if not down and node != el:
            _tag_of(node, names, tag_bits, &bits)
            if bits & S_BREAK:
                add1(out, 32)
            _run(node.next, scratch, &p, &n)
            add(out, p, n)
        if not step(&node, el, &down):
            break
    return 0


def headings(object root, bytes name, object skip, object class_hides, dict tag_bits):
    """``_title._headings_py`` before ``_norm``: (seen text, in ``skip``)
    of each ``name`` element under ``root`` (itself too) in document order
    that neither it nor an ancestor hides (``_content._is_hidden``, whose
    class test is ``class_hides``). ``skip``: elements (an iterable);
    ``tag_bits``: ``_title._SEEN_BITS``. One walk over libxml2's nodes:
    lxml's ``iter("h1")`` alone was half of ``page_title``."""
    cdef cetree._Element top = <cetree._Element?>root
    cdef xmlNode* c_root = top._c_node
    cdef xmlNode* node = c_root
    cdef xmlNode* up
    cdef const char* c_name = name
    cdef NodeMap names, skips
    cdef Buf out, scratch
    cdef bint hidden, inside
    cdef list found = []
    out.data = NULL; out.len = 0; out.cap = 0
    scratch.data = NULL; scratch.len = 0; scratch.cap = 0
    names.keys = NULL; names.values = NULL
    skips.keys = NULL; skips.values = NULL
    try:
        if _map_init(&names) < 0 or _map_init(&skips) < 0:
            raise MemoryError()
        for e in skip:
            _map_put(&skips, <size_t>(<cetree._Element?>e)._c_node, 1)
        while node != NULL:
            if _named(node, c_name):
                hidden = inside = False
                up = node
                while up != NULL and up.type == ELEMENT:
                    if not hidden and up.properties != NULL and _hidden(up, class_hides):
                        hidden = True
                        break
                    if not inside and _map_has(&skips, <size_t>up):
                        inside = True
                    up = up.parent
                if not hidden:
                    out.len = 0
                    _seen_text(node, &names, tag_bits, class_hides, &out, &scratch)
                    found.append((out.data[:out.len].decode("utf-8", "surrogatepass") if out.len else "", inside))
            node = next_node(node, c_root, True)
        return found
    finally:
        free(out.data)
        free(scratch.data)
        free(names.keys)
        free(names.values)
        free(skips.keys)
        free(skips.values)


cdef Py_ssize_t _count_tokens(const char* p, Py_ssize_t n) except -1:
    """``len(re.findall(r"\\w+", text))`` of UTF-8 text."""
    cdef Py_ssize_t i, count = 0
    cdef bint in_word = False, wide = False, word
    cdef unsigned char c
    for i in range(n):
        if <unsigned char>p[i] >= 128:
            wide = True
            break
    if not wide:
        for i in range(n):
            c = <unsigned char>p[i]
            word = _ASCII_CLASS[c] != 0 or c == 95
            if word and not in_word:
                count += 1
            in_word = word
        return count
    for ch in p[:n].decode("utf-8", "surrogatepass"):
        word = _word_char(ch)
        if word and not in_word:
            count += 1
        in_word = word
    return count


def noscript_words(object root):
    """``_content.show_noscript``'s count: the words (``\\w+``) of each
    ``<noscript>`` under ``root`` (itself too) in its ``itertext()``,
    summed; -1 when there is none. ``itertext()`` gives every run of text
    in the subtree but its tail (the element's text, its descendants'
    texts and tails, comments' tails but not their text), and tokens never
    cross from one run to the next (``" ".join``). One walk over libxml2's
    nodes instead of lxml's ``iter("noscript")`` over the page."""
    cdef cetree._Element top = <cetree._Element?>root
    cdef xmlNode* c_root = top._c_node
    cdef xmlNode* node = c_root
    cdef xmlNode* inner
    cdef Buf scratch
    cdef Py_ssize_t held = -1, n
    cdef const char* p
    scratch.data = NULL; scratch.len = 0; scratch.cap = 0
    try:
        while node != NULL:
            if _named(node, "noscript"):
                if held < 0:
                    held = 0
                inner = node.children
                while inner != NULL:
                    if ((inner.type == TEXT or inner.type == CDATA)
                            and (inner.prev == NULL or (inner.prev.type != TEXT and inner.prev.type != CDATA))):
                        _run(inner, &scratch, &p, &n)  # a run starts here
                        held += _count_tokens(p, n)
                    inner = next_node(inner, node, True)
            node = next_node(node, c_root, True)
        return held
    finally:
        free(scratch.data)


def first_text(object root, bytes name):
    """``root.findtext(".//" + name) or ""``: the text of the first
    descendant ``name`` element (no namespace), in document order. One walk
    over libxml2's nodes (lxml's search cost 0.1 ms a page)."""
    cdef cetree._Element top = <cetree._Element?>root
    cdef xmlNode* c_root = top._c_node
    cdef xmlNode* node = next_node(c_root, c_root, True)
    cdef const char* c_name = name
    while node != NULL:
        if _named(node, c_name):
            return _run_text(node.children)
        node = next_node(node, c_root, True)
    return ""


cdef int _subtree_text(xmlNode* el, Buf* out) except -1:
    """``"".join(el.itertext())`` as UTF-8 into ``out``: every text and
    CDATA node under ``el`` in document order (not its tail)."""
    cdef xmlNode* node = el.children
    cdef const char* content
    while node != NULL:
        if (node.type == TEXT or node.type == CDATA) and node.content != NULL:
            content = <const char*>node.content
            add(out, content, strlen(content))
        node = next_node(node, el, True)
    return 0


def head_tags(object root):
    """``_title._head_tags_py``: each ``<title>`` and ``<meta>`` under
    ``root`` (itself too) in document order, a meta as (True, its
    property or else name, its content) and a title as (False, whether
    an ``<svg>`` holds it, its text). One walk over libxml2's nodes, no
    element proxy: a page's head holds dozens of metas."""
    cdef cetree._Element top = <cetree._Element?>root
    cdef xmlNode* c_root = top._c_node
    cdef xmlNode* node = c_root
    cdef xmlNode* up
    cdef Buf text
    cdef bint in_svg
    cdef list found = []
    text.data = NULL; text.len = 0; text.cap = 0
    try:
        while node != NULL:
            if _named(node, "meta"):
                found.append((True, _prop(node, "property") or _prop(node, "name") or "",
                              _prop(node, "content") or ""))
            elif _named(node, "title"):
                in_svg = False
                up = node.parent
                while up != NULL and up.type == ELEMENT:
                    if _named(up, "svg"):
                        in_svg = True
                        break
                    up = up.parent
                text.len = 0
                _subtree_text(node, &text)
                found.append((False, in_svg, text.data[:text.len].decode("utf-8", "surrogatepass")
                              if text.len else ""))
            node = next_node(node, c_root, True)
        return found
    finally:
        free(text.data)


def child_text(object root, bytes parent, bytes child):
    """``root.find(parent + "/" + child)``'s text, "" when there is no such
    element or it has none: the first ``child`` element (no namespace) of
    the ``parent`` children of ``root``, in document order. For content
    mode's ``<head><title>`` without an ElementPath search a page."""
    cdef xmlNode* outer = (<cetree._Element?>root)._c_node.children
    cdef xmlNode* inner
    cdef const char* c_parent = parent
    cdef const char* c_child = child
    while outer != NULL:
        if _named(outer, c_parent):
            inner = outer.children
            while inner != NULL:
                if _named(inner, c_child):
                    return _run_text(inner.children)
                inner = inner.next
        outer = outer.next
    return ""


cdef const unsigned char* _attr_value(xmlNode* node, const char* name, bint* odd) noexcept nogil:
    """An attribute's value as libxml2 holds it (NULL: absent). ``odd`` is
    set when it is not held as one text node (then "" is returned)."""
    cdef tree.xmlAttr* attr = node.properties
    while attr != NULL:
        if attr.ns == NULL and strcmp(<const char*>attr.name, name) == 0:
            if attr.children == NULL:
                return <const unsigned char*>""
            if attr.children.next != NULL or attr.children.type != TEXT or attr.children.content == NULL:
                odd[0] = True
                return <const unsigned char*>""
            return <const unsigned char*>attr.children.content
        attr = attr.next
    return NULL


cdef bint _holds_word(const unsigned char* s, Buf* low, list words) except -1:
    """Whether ``s`` holds one of ``words`` (lower-case ASCII bytes) in any
    case; True for any non-ASCII byte, which Python's ``lower()`` may map
    to ASCII: a prefilter may let through more, never less."""
    cdef Py_ssize_t n = strlen(<const char*>s)
    cdef Py_ssize_t i
    cdef unsigned char ch
    cdef bytes word
    low.len = 0
    grow(low, n + 1)
    for i in range(n):
        ch = s[i]
        if ch >= 0x80:
            return True
        low.data[i] = ch + 32 if 65 <= ch <= 90 else ch
    low.data[n] = 0
    for word in words:
        if strstr(low.data, PyBytes_AS_STRING(word)) != NULL:
            return True
    return False


cdef bint _lead_text(xmlNode* node, set words) except -1:
    """Whether the element's leading text (its ``.text``) may open with a
    byline word: its first word past white space, in ASCII letters and any
    case, is one of ``words`` (lower-case bytes), or it is not ASCII."""
    cdef xmlNode* c = node.children
    cdef const unsigned char* p
    cdef unsigned char ch
    cdef char word[24]
    cdef int n = 0
    while c != NULL and (c.type == TEXT or c.type == CDATA):
        p = <const unsigned char*>c.content
        if p != NULL:
            while p[0] != 0:
                ch = p[0]
                if n == 0 and (ch == 32 or 9 <= ch <= 13 or 28 <= ch <= 31):
                    p += 1
                    continue
                if ch >= 0x80:
                    return True
                if 65 <= ch <= 90:
                    ch += 32
                if not (97 <= ch <= 122):
                    return n > 0 and word[:n] in words
                if n == 23:
                    return False
                word[n] = ch
                n += 1
                p += 1
        c = c.next
    return n > 0 and word[:n] in words


def candidate_walk(object root, list class_words, list href_words, set lead_words, tuple tags,
                   list rel_words):
    """``_candidates._candidate_elements``'s prefilter: (position, element)
    of the elements under ``root`` (itself first, position 0; elements only,
    as ``root.iter(etree.Element)`` counts them) that may hold an author or
    a date: a class or id holding one of ``class_words``, an ``itemprop``,
    a ``datetime``, a ``<time>``, one of ``tags`` (the headings), a link
    with a ``rel`` holding one of ``rel_words`` or an ``href`` holding one
    of ``href_words``, or leading
    text opening with one of ``lead_words``. A superset: Python applies the
    exact tests to these. Only these get element proxies (the loop over
    every element in Python cost 4 ms a page)."""
    cdef cetree._Element top = <cetree._Element?>root
    cdef xmlNode* c_root = top._c_node
    cdef xmlNode* node = c_root
    cdef Py_ssize_t i = 0
    cdef const unsigned char* cls
    cdef const unsigned char* ident
    cdef const unsigned char* v
    cdef bint odd, hit
    cdef list out = []
    cdef list names = [t.encode("ascii") for t in tags]
    cdef bytes name
    cdef Buf low
    low.data = NULL; low.len = 0; low.cap = 0
    try:
        while node != NULL:
            if node.type == ELEMENT:
                odd = False
                hit = False
                cls = _attr_value(node, "class", &odd)
                ident = _attr_value(node, "id", &odd)
                if odd:
                    hit = True
                elif cls != NULL and cls[0] != 0 and _holds_word(cls, &low, class_words):
                    hit = True
                elif ident != NULL and ident[0] != 0 and _holds_word(ident, &low, class_words):
                    hit = True
                elif _attr_value(node, "itemprop", &odd) != NULL or odd:
                    hit = True
                else:
                    v = _attr_value(node, "datetime", &odd)
                    if odd or (v != NULL and v[0] != 0):
                        hit = True
                    elif node.ns == NULL and node.name != NULL:
                        if strcmp(<const char*>node.name, "time") == 0:
                            hit = True
                        elif strcmp(<const char*>node.name, "a") == 0:
                            v = _attr_value(node, "rel", &odd)
                            if odd or (v != NULL and v[0] != 0 and _holds_word(v, &low, rel_words)):
                                hit = True
                            else:
                                v = _attr_value(node, "href", &odd)
                                hit = odd or (v != NULL and v[0] != 0 and _holds_word(v, &low, href_words))
                        else:
                            for name in names:
                                if strcmp(<const char*>node.name, PyBytes_AS_STRING(name)) == 0:
                                    hit = True
                                    break
                    if not hit:
                        hit = _lead_text(node, lead_words)
                if hit:
                    out.append((i, cetree.elementFactory(top._doc, node)))
                i += 1
            node = next_node(node, c_root, True)
        return out
    finally:
        free(low.data)


cdef int _byline_tag(xmlNode* node) noexcept nogil:
    """``_bylines._seen_text``'s tag classes: 1 unseen (``_UNSEEN``), 2 a
    line break before it (br p div li), 4 one after it too (p div li)."""
    cdef const char* n
    if node.ns != NULL or node.name == NULL:
        return 0
    n = <const char*>node.name
    if n[0] == b'p' and n[1] == 0 or strcmp(n, "div") == 0 or strcmp(n, "li") == 0:
        return 6
    if strcmp(n, "br") == 0:
        return 2
    if (strcmp(n, "script") == 0 or strcmp(n, "style") == 0 or strcmp(n, "noscript") == 0
            or strcmp(n, "template") == 0 or strcmp(n, "svg") == 0 or strcmp(n, "button") == 0
            or strcmp(n, "select") == 0 or strcmp(n, "option") == 0):
        return 1
    return 0


cdef inline Py_ssize_t _chars(const char* p, Py_ssize_t n) noexcept nogil:
    """Characters of UTF-8 text: its bytes that do not continue one."""
    cdef Py_ssize_t i, count = 0
    for i in range(n):
        if (<unsigned char>p[i] & 0xC0) != 0x80:
            count += 1
    return count


cdef Py_ssize_t _add_run(xmlNode* c, Buf* scratch, Buf* out) except -1:
    """The text run from ``c`` (``_run``) added to ``out``; its characters."""
    cdef const char* p
    cdef Py_ssize_t n
    _run(c, scratch, &p, &n)
    add(out, p, n)
    return _chars(p, n)


def byline_text(object element, Py_ssize_t limit, object class_hides):
    """``_bylines._seen_text`` before its lines are tidied: the text of
    ``element`` a reader sees, "\\n" for block and line breaks, unseen and
    hidden elements left out but their tails (``_content._is_hidden``, whose
    class test is ``class_hides``), cut after the event that passes
    ``limit`` characters, as lxml's ``iterwalk`` gives the events."""
    cdef cetree._Element top = <cetree._Element?>element
    cdef xmlNode* el = top._c_node
    cdef xmlNode* node = el
    cdef bint down = True
    cdef int bits
    cdef Py_ssize_t size = 0
    cdef Buf out, scratch
    out.data = NULL; out.len = 0; out.cap = 0
    scratch.data = NULL; scratch.len = 0; scratch.cap = 0
    try:
        while True:
            if down and node.type == ELEMENT:
                bits = _byline_tag(node)
                if node != el and (bits & 1 or (node.properties != NULL and _hidden(node, class_hides))):
                    down = False  # not entered; its end still comes, with its tail
                else:
                    if bits & 2:
                        add1(&out, 10)
                    size += _add_run(node.children, &scratch, &out)
                    if size > limit:
                        break
                    if node.children != NULL:
                        node = node.children
                        continue
                    down = False
            if not down and node != el:
                if _byline_tag(node) & 4:
                    add1(&out, 10)
                size += _add_run(node.next, &scratch, &out)
                if size > limit:
                    break
            if not step(&node, el, &down):
                break
        return out.data[:out.len].decode("utf-8", "surrogatepass") if out.len else ""
    finally:
        free(out.data)
        free(scratch.data)


def stage2_table(list scores, list words, list link_density, list nodes, list parents, Py_ssize_t head,
                 list keys, bint single, tuple levels, long prose_words, double sure_words,
                 double sure_share, Py_ssize_t width):
    """``_decide.stage2_rows`` as one flat array of ``width`` doubles a
    block: the same operations in the same order, so the same doubles (a
    test compares them). Python's walk built ~50 floats a block in lists and
    cost a quarter of a page's clean."""
    cdef Py_ssize_t n = len(scores), count = len(parents), i, e, k, r, node, level, col, nruns
    cdef array out = clone(_DOUBLES, 0, False)
    if n == 0:
        return out
    cdef Py_ssize_t maxlevel = max(levels)
    cdef double* sc = <double*>malloc(n * sizeof(double))
    cdef long* wd = <long*>malloc(n * sizeof(long))
    cdef Py_ssize_t* nd = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
    cdef Py_ssize_t* run_of = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
    cdef double* mass = <double*>calloc(count + 1, sizeof(double))
    cdef double* held = <double*>calloc(count + 1, sizeof(double))
    cdef double* prose_in = <double*>calloc(count + 1, sizeof(double))
    cdef long* blocks_in = <long*>calloc(count + 1, sizeof(long))
    cdef Py_ssize_t* par = <Py_ssize_t*>malloc((count + 1) * sizeof(Py_ssize_t))
    cdef long* depth = <long*>calloc(count + 1, sizeof(long))
    cdef Py_ssize_t* meet = <Py_ssize_t*>malloc((count + 1) * sizeof(Py_ssize_t))
    cdef char* on_head = <char*>calloc(count + 1, 1)
    cdef char* inside = <char*>calloc(count + 1, 1)
    cdef char* is_level = <char*>calloc(maxlevel + 1, 1)
    cdef double* run_sum = <double*>calloc(n, sizeof(double))
    cdef long* run_words = <long*>calloc(n, sizeof(long))
    cdef long* run_count = <long*>calloc(n, sizeof(long))
    cdef double page[9]
    cdef double s, x, all_prose, article_share, weighted, h
    cdef long total, sure, sure_prose, prose, over_quarter
    cdef Py_ssize_t article, up
    cdef double* row
    cdef dict run_ids = {}
    try:
        if not (sc and wd and nd and run_of and mass and held and prose_in and blocks_in and par and depth
                and meet and on_head and inside and is_level and run_sum and run_words and run_count):
            raise MemoryError()
        for level in levels:
            is_level[level] = 1
        for e in range(count):
            par[e] = parents[e]
        total = 0
        for i in range(n):
            sc[i] = scores[i]
            wd[i] = words[i]
            nd[i] = nodes[i]
            total += wd[i]
            r = run_ids.setdefault(keys[i], len(run_ids))
            run_of[i] = r
            run_sum[r] += sc[i]
            run_words[r] += wd[i]
            run_count[r] += 1
        if total == 0:
            total = 1
        for i in range(n):
            mass[nd[i]] += sc[i] * wd[i]
            held[nd[i]] += wd[i]
            blocks_in[nd[i]] += 1
        for e in range(count - 1, 0, -1):
            up = par[e]
            if up >= 0:
                mass[up] += mass[e]
                held[up] += held[e]
                blocks_in[up] += blocks_in[e]
        for e in range(count):
            depth[e] = depth[par[e]] + 1 if par[e] >= 0 else 0
        if head >= 0:
            e = nd[head]
            while e >= 0:
                on_head[e] = 1
                e = par[e]
        for e in range(count):
            meet[e] = e if on_head[e] else (meet[par[e]] if par[e] >= 0 else -1)
        for i in range(n):
            if sc[i] > 0.5 and wd[i] >= prose_words:
                prose_in[nd[i]] += wd[i]
        for e in range(count - 1, 0, -1):
            if par[e] >= 0:
                prose_in[par[e]] += prose_in[e]
        all_prose = 0.0
        for e in range(count):
            if par[e] < 0:
                all_prose += prose_in[e]
        article = -1
        if head >= 0 and all_prose >= sure_words:
            e = nd[head]
            while e >= 0 and prose_in[e] < sure_share * all_prose:
                e = par[e]
            article = e
        for e in range(count):
            inside[e] = e == article or (par[e] >= 0 and inside[par[e]])
        article_share = held[article] / total if article >= 0 else 0.0
        sure = sure_prose = prose = over_quarter = 0
        weighted = 0.0
        for i in range(n):
            if sc[i] > 0.5:
                sure += wd[i]
                if wd[i] >= prose_words:
                    sure_prose += wd[i]
            if wd[i] >= prose_words:
                prose += wd[i]
            if sc[i] > 0.25:
                over_quarter += wd[i]
            weighted += sc[i] * wd[i]
        page[0] = log1p(<double>n)
        page[1] = log1p(<double>total)
        page[2] = <double>prose / total
        page[3] = <double>sure / total
        page[4] = <double>over_quarter / total
        page[5] = weighted / total
        page[6] = <double>sure_prose / (sure if sure else 1)
        page[7] = 1.0 if head >= 0 else 0.0
        page[8] = 1.0 if single else 0.0
        out = clone(_DOUBLES, n * width, False)
        for i in range(n):
            row = out.data.as_doubles + i * width
            node = nd[i]
            r = run_of[i]
            row[0] = sc[i]
            row[1] = run_sum[r] / run_count[r]
            row[2] = <double>run_words[r] / total
            row[3] = log1p(<double>run_count[r])
            row[4] = log1p(<double>wd[i])
            x = link_density[i]
            row[5] = x if x < 1.0 else 1.0
            row[6] = <double>i / n
            row[7] = 1.0 if i == head else 0.0
            col = 8
            e = node
            for level in range(1, maxlevel + 1):
                if par[e] >= 0:
                    e = par[e]
                if is_level[level]:
                    h = held[e]
                    row[col] = mass[e] / (h if h > 1.0 else 1.0)
                    row[col + 1] = h / total
                    row[col + 2] = log1p(<double>blocks_in[e])
                    col += 3
            if head >= 0:
                e = meet[node]
                if e >= 0:
                    h = held[e]
                    row[col] = mass[e] / (h if h > 1.0 else 1.0)
                    row[col + 1] = h / total
                    row[col + 2] = <double>(depth[node] - depth[e])
                else:
                    row[col] = 0.0
                    row[col + 1] = 1.0
                    row[col + 2] = 30.0
                row[col + 3] = 1.0 if i > head else 0.0
            else:
                row[col] = 0.0
                row[col + 1] = 1.0
                row[col + 2] = 30.0
                row[col + 3] = 0.0
            col += 4
            row[col] = 1.0 if article >= 0 and not inside[node] else 0.0
            row[col + 1] = article_share
            row[col + 2] = 1.0 if article >= 0 else 0.0
            col += 3
            if col + 9 != width:
                raise ValueError(f"stage 2 rows of {col + 9} columns, not {width}")
            memcpy(row + col, page, 9 * sizeof(double))
        return out
    finally:
        free(sc); free(wd); free(nd); free(run_of); free(mass); free(held); free(prose_in); free(blocks_in)
        free(par); free(depth); free(meet); free(on_head); free(inside); free(is_level); free(run_sum)
        free(run_words); free(run_count)
