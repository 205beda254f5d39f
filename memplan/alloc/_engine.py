"""The block-level model of one device's caching allocator (single stream).

It follows `DeviceCachingAllocator` of `c10/cuda/CUDACachingAllocator.cpp`
(@ 001074d25084fdb87a799823e395a50f5ec044d3) and of torch_npu's `NPUCachingAllocator.cpp`
(@ 165f15da0eb0ac26c7b7dcaedb0f7c5723c7d07e) rule for rule; the C++ function each method mirrors is
named in its docstring. Our own code: free blocks live in one sorted list of integer keys
`size << _SHIFT | addr` per pool (the C++ `std::set` ordered by (size, ptr)), so best fit is one bisect.
Addresses are fake but consistent: segments get increasing, 2 MiB aligned addresses with a gap between
them, so neighbours are exactly the blocks of one segment.
"""
from __future__ import annotations

from bisect import bisect_left, insort

from memplan.alloc._rules import (
    K_EXTRA_LARGE_BUFFER, K_LARGE_BUFFER, K_MIN_BLOCK_SIZE, K_ROUND_LARGE, K_SMALL_BUFFER, K_SMALL_SIZE,
    get_allocation_size, round_size,
)

_SHIFT = 56
_MASK = (1 << _SHIFT) - 1


class Block:
    __slots__ = ("addr", "size", "prev", "next", "allocated", "pool", "es", "mapped", "gc_base")

    def __init__(self, addr: int, size: int, pool: "Pool", es=None, mapped: bool = True):
        self.addr = addr
        self.size = size
        self.prev: Block | None = None
        self.next: Block | None = None
        self.allocated = False
        self.pool = pool
        self.es = es
        self.mapped = mapped
        self.gc_base = 0


class Pool:
    """BlockPool: free (cached, mapped) blocks ordered by (size, addr), plus unmapped expandable ranges."""

    __slots__ = ("small", "keys", "by_key", "unmapped", "calls", "es")

    def __init__(self, small: bool):
        self.small = small
        self.keys: list[int] = []
        self.by_key: dict[int, Block] = {}
        self.unmapped: list[Block] = []  # sorted by address
        self.calls = 0  # get_free_blocks_call_count (garbage collection ages)
        self.es: ExpandableSegment | None = None


class ExpandableSegment:
    """One reserved virtual range mapped page by page (2 MiB pages small pool, 20 MiB large)."""

    __slots__ = ("base", "page", "npages", "mapped")

    def __init__(self, base: int, page: int, npages: int):
        self.base = base
        self.page = page
        self.npages = npages
        self.mapped = bytearray(npages)


class OutOfMemory(Exception):
    pass


class Engine:
    def __init__(self, cfg, *, pad: int, npu: bool, limit: int | None, allowed: int | None,
                 device_total: int | None):
        self.cfg = cfg
        self.pad = pad
        self.npu = npu
        self.divs = cfg.roundup_power2_divisions
        self.max_split = cfg.max_split_size if cfg.max_split_size is not None else 1 << 64
        self.split_limited = cfg.max_split_size is not None
        self.non_split_rounding = K_LARGE_BUFFER if npu else cfg.max_non_split_rounding
        self.expandable = cfg.expandable_segments
        self.align = cfg.base_addr_aligned_size if npu else 0
        self.limit = limit  # bytes this allocator may hold (capacity - memory outside it)
        self.allowed = allowed  # set_per_process_memory_fraction * total, or None
        self.gc = cfg.garbage_collection_threshold if allowed is not None else 0.0
        self.device_total = device_total or (1 << 40)
        self.small = Pool(True)
        self.large = Pool(False)
        self.reserved = 0
        self.allocated = 0
        self.segments = 0
        self.retries = 0
        self.device_allocs = 0
        self.device_frees = 0
        self.next_addr = 1 << 30
        self._sizes: dict[int, tuple[int, bool, int]] = {}   # request bytes -> (rounded, small pool?, segment)

    # ---- free-set helpers -------------------------------------------------------------------
    def _insert(self, b: Block) -> None:
        p = b.pool
        k = (b.size << _SHIFT) | b.addr
        insort(p.keys, k)
        p.by_key[k] = b
        b.gc_base = p.calls

    def _remove(self, b: Block) -> None:
        p = b.pool
        k = (b.size << _SHIFT) | b.addr
        keys = p.keys
        i = bisect_left(keys, k)
        del keys[i]
        del p.by_key[k]

    def _new_addr(self, size: int) -> int:
        addr = self.next_addr
        self.next_addr += (size + 2 * K_ROUND_LARGE - 1) // K_ROUND_LARGE * K_ROUND_LARGE + K_ROUND_LARGE
        return addr

    # ---- malloc ---------------------------------------------------------------------------------
    def malloc(self, nbytes: int) -> Block:
        """DeviceCachingAllocator::malloc. Raises OutOfMemory when even free-and-retry fails."""
        got = self._sizes.get(nbytes)
        if got is None:
            got = self._sizes[nbytes] = self._size_rules(nbytes)
        size, small, alloc_size = got
        pool = self.small if small else self.large
        b = self.get_free_block(pool, size)
        if b is None:
            if self.gc > 0.0:
                self.garbage_collect()
            b = self.alloc_block(pool, size, alloc_size, False)
            if b is None and self.release_available_cached_blocks(pool, size):
                b = self.alloc_block(pool, size, alloc_size, False)
            if b is None:
                self.release_cached_blocks()
                b = self.alloc_block(pool, size, alloc_size, True)
            if b is None:
                raise OutOfMemory(alloc_size)
        return self.take(b, pool, size)

    def _size_rules(self, nbytes: int) -> tuple[int, bool, int]:
        """round_size, the pool (small?) and get_allocation_size of a request: fixed per request size for
        the engine's settings, so malloc computes them once per size."""
        size = round_size(nbytes, self.divs, self.pad)
        small = size <= K_SMALL_SIZE
        if self.cfg.page_size_1g and not small:
            alloc_size = K_EXTRA_LARGE_BUFFER * ((size + K_EXTRA_LARGE_BUFFER - 1) // K_EXTRA_LARGE_BUFFER)
        else:
            alloc_size = get_allocation_size(size)
        return size, small, alloc_size

    def take(self, b: Block, pool: Pool, size: int) -> Block:
        """The tail of malloc (torch_npu's base-address alignment) and alloc_found_block."""
        if self.align and b.es is not None and size >= K_ROUND_LARGE and b.addr % self.align:
            off = self.align - b.addr % self.align
            if off + size <= b.size:
                nb = Block(b.addr + off, b.size - off, pool, b.es)
                nb.next = b.next
                if nb.next is not None:
                    nb.next.prev = nb
                nb.prev = b
                b.next = nb
                b.size = off
                self._insert(b)  # the C++ inserts the front sliver without merging it
                b = nb
        remaining = b.size - size
        if pool.small or self.expandable:  # should_split
            split = remaining >= K_MIN_BLOCK_SIZE
        else:
            split = size < self.max_split and remaining > K_SMALL_SIZE
        if split:
            nb = Block(b.addr, size, pool, b.es)
            nb.prev = b.prev
            if nb.prev is not None:
                nb.prev.next = nb
            nb.next = b
            b.prev = nb
            b.addr += size
            b.size = remaining
            self._insert(b)
            b = nb
        b.allocated = True
        self.allocated += b.size
        return b

    def get_free_block(self, pool: Pool, size: int) -> Block | None:
        """get_free_block: best fit (smallest, then lowest address) with the max_split_size rules."""
        if self.gc > 0.0:
            pool.calls += 1
        keys = pool.keys
        i = bisect_left(keys, size << _SHIFT)
        n = len(keys)
        if i == n:
            return None
        b = pool.by_key[keys[i]]
        if b.es is not None:
            # best fit counts the unmapped space after a block as part of it
            def exp_size(x: Block) -> int:
                return x.size + (x.next.size if x.next is not None and not x.next.mapped else 0)
            while b.es is not None and i + 1 < n:
                nxt = pool.by_key[keys[i + 1]]
                if exp_size(nxt) < exp_size(b):
                    i += 1
                    b = nxt
                else:
                    break
        bs = b.size
        if size < self.max_split and bs >= self.max_split:
            return None  # do not return an oversized block for a small request
        if size >= self.max_split and bs >= size + self.non_split_rounding:
            return None  # an oversized block may be rounded up, but within a limit
        del keys[i]
        del pool.by_key[(bs << _SHIFT) | b.addr]
        return b

    def alloc_block(self, pool: Pool, size: int, alloc_size: int, retry: bool) -> Block | None:
        """alloc_block: a new segment (cudaMalloc / aclrtMalloc), or new pages of an expandable one."""
        if retry:
            self.retries += 1
        if self.allowed is not None and self.reserved + alloc_size > self.allowed:
            return None
        if self.expandable:
            return self.try_allocate_expandable_block(pool, size)
        if self.limit is not None and self.reserved + alloc_size > self.limit:
            return None
        b = Block(self._new_addr(alloc_size), alloc_size, pool)
        self.reserved += alloc_size
        self.segments += 1
        self.device_allocs += 1
        return b

    def release_block(self, b: Block) -> None:
        """release_block: cudaFree a whole cached segment."""
        self._remove(b)
        self.reserved -= b.size
        self.segments -= 1
        self.device_frees += 1

    def release_available_cached_blocks(self, pool: Pool, size: int) -> bool:
        """release_available_cached_blocks: with max_split_size set, free just enough oversize blocks."""
        if not self.split_limited:
            return False
        key_size = max(size, self.max_split)
        keys = pool.keys
        i = bisect_left(keys, key_size << _SHIFT)
        if i < len(keys):
            b = pool.by_key[keys[i]]
            if b.es is not None or b.prev is not None or b.next is not None:
                return False
            self.release_block(b)
            return True
        victims, total = [], 0
        j = i - 1
        while j >= 0 and total < key_size:
            b = pool.by_key[keys[j]]
            if b.size < self.max_split or b.es is not None or b.prev is not None or b.next is not None:
                break
            victims.append(b)
            total += b.size
            j -= 1
        for b in victims:
            self.release_block(b)
        return total >= key_size

    def release_cached_blocks(self) -> None:
        """release_cached_blocks: free every unsplit cached segment, unmap free expandable pages."""
        for pool in (self.large, self.small):
            to_unmap = []
            for k in list(pool.keys):
                b = pool.by_key[k]
                if b.es is not None:
                    to_unmap.append(b)
                elif b.prev is None and b.next is None:
                    self.release_block(b)
            for b in to_unmap:
                self.unmap_block(b)
                if b.prev is None and b.next is None and not b.mapped:
                    pool.unmapped.remove(b)
                    pool.es = None

    def garbage_collect(self) -> None:
        """garbage_collect_cached_blocks: above threshold * allowed memory, free the oldest cached
        unsplit large blocks (age = get_free_block calls on the pool since the block was cached)."""
        threshold = int(self.gc * self.allowed)
        if self.reserved <= threshold:
            return
        target = self.reserved - threshold
        pool = self.large
        cands = [pool.by_key[k] for k in pool.keys]
        cands = [b for b in cands if b.prev is None and b.next is None and b.es is None]
        if not cands:
            return
        total_age = sum(pool.calls - b.gc_base for b in cands)
        count = len(cands)
        reclaimed = 0
        freed = True
        while reclaimed < target and freed and count > 0:
            threshold_age = total_age / count
            freed = False
            for b in [pool.by_key[k] for k in list(pool.keys)]:
                if b.prev is None and b.next is None and b.es is None and pool.calls - b.gc_base >= threshold_age:
                    freed = True
                    reclaimed += b.size
                    total_age -= pool.calls - b.gc_base
                    count -= 1
                    self.release_block(b)

    # ---- free -----------------------------------------------------------------------------------
    def free(self, b: Block) -> None:
        """free + free_block: merge with free neighbours of the same mapping state, cache the block."""
        b.allocated = False
        self.allocated -= b.size
        self._merge_cached_neighbours(b)
        self._insert(b)

    def _merge_cached_neighbours(self, b: Block) -> None:
        """Absorb free cached neighbours in the same mapping state (free_block's try_merge_blocks)."""
        p = b.prev
        if p is not None and not p.allocated and p.mapped == b.mapped:
            self._remove(p)
            b.addr = p.addr
            b.size += p.size
            b.prev = p.prev
            if b.prev is not None:
                b.prev.next = b
        n = b.next
        if n is not None and not n.allocated and n.mapped == b.mapped:
            self._remove(n)
            b.size += n.size
            b.next = n.next
            if b.next is not None:
                b.next.prev = b

    # ---- expandable segments -------------------------------------------------------------------
    def _merge_unmapped(self, b: Block, other: Block | None) -> None:
        """try_merge_blocks for unmapped neighbours."""
        if other is None or other.allocated or other.mapped or b.mapped:
            return
        b.pool.unmapped.remove(other)
        if other is b.prev:
            b.addr = other.addr
            b.prev = other.prev
            if b.prev is not None:
                b.prev.next = b
        else:
            b.next = other.next
            if b.next is not None:
                b.next.prev = b
        b.size += other.size

    def _page_size(self, pool: Pool) -> int:
        if pool.small:
            return K_SMALL_BUFFER
        if self.npu and self.cfg.page_size_1g:
            return K_EXTRA_LARGE_BUFFER
        if self.npu and self.cfg.segment_size:
            return self.cfg.segment_size
        return K_LARGE_BUFFER

    def find_expandable_block(self, pool: Pool, size: int) -> Block:
        """find_expandable_block: lowest unmapped range (with the free block before it) that fits."""
        for c in pool.unmapped:
            if c.prev is not None and not c.prev.allocated:
                c = c.prev
            total, x = 0, c
            while total < size and x is not None and not x.allocated:
                total += x.size
                x = x.next
            if total >= size:
                return c
        page = self._page_size(pool)
        npages = -(-(self.device_total + self.device_total // 8) // page)
        es = ExpandableSegment(self._new_addr(page * npages), page, npages)
        pool.es = es
        c = Block(es.base, page * npages, pool, es, mapped=False)
        insort(pool.unmapped, c, key=lambda blk: blk.addr)
        return c

    def map_block(self, b: Block, size: int) -> bool:
        """map_block: map whole pages covering [addr, addr + size) and cache them as a free block."""
        es, pool = b.es, b.pool
        begin = (b.addr - es.base) // es.page
        end = -(-(b.addr + size - es.base) // es.page)
        nbytes = (end - begin) * es.page
        if nbytes == 0 or (self.limit is not None and self.reserved + nbytes > self.limit):
            return False
        pool.unmapped.remove(b)
        b.mapped = True
        if nbytes < b.size:
            rest = Block(b.addr + nbytes, b.size - nbytes, pool, es, mapped=False)
            rest.prev = b
            rest.next = b.next
            if rest.next is not None:
                rest.next.prev = rest
            b.next = rest
            insort(pool.unmapped, rest, key=lambda blk: blk.addr)
            b.size = nbytes
        self._merge_cached_neighbours(b)  # b is mapped now: merges only with mapped free neighbours
        self._insert(b)
        self.reserved += nbytes
        self.device_allocs += 1
        m = es.mapped
        left = begin > 0 and m[begin - 1]
        right = end < es.npages and m[end]
        self.segments += 1 - bool(left) - bool(right)
        m[begin:end] = b"\x01" * (end - begin)
        return True

    def try_allocate_expandable_block(self, pool: Pool, size: int) -> Block | None:
        """try_allocate_expandable_block: grow the segment by just enough pages for `size`."""
        c = self.find_expandable_block(pool, size)
        if not c.mapped and not self.map_block(c, min(c.size, size)):
            return None
        while c.size < size:
            nxt = c.next
            if nxt is None or not self.map_block(nxt, min(size - c.size, nxt.size)):
                return None
            c = nxt
        self._remove(c)
        return c

    def unmap_block(self, b: Block) -> None:
        """unmap_block: give back the whole free pages inside a cached expandable block."""
        es, pool = b.es, b.pool
        begin = -(-(b.addr - es.base) // es.page)
        end = (b.addr + b.size - es.base) // es.page
        if begin >= end:
            return
        self._remove(b)
        um_addr = es.base + begin * es.page
        um_size = (end - begin) * es.page
        before = um_addr - b.addr
        after = b.size - before - um_size
        if before > 0:
            f = Block(b.addr, before, pool, es)
            f.prev = b.prev
            if f.prev is not None:
                f.prev.next = f
            f.next = b
            b.prev = f
            self._insert(f)
        if after > 0:
            f = Block(um_addr + um_size, after, pool, es)
            f.next = b.next
            if f.next is not None:
                f.next.prev = f
            f.prev = b
            b.next = f
            self._insert(f)
        b.addr = um_addr
        b.size = um_size
        b.mapped = False
        self._merge_unmapped(b, b.prev)
        self._merge_unmapped(b, b.next)
        insort(pool.unmapped, b, key=lambda blk: blk.addr)
        self.reserved -= um_size
        self.device_frees += 1
        m = es.mapped
        left = begin > 0 and m[begin - 1]
        right = end < es.npages and m[end]
        self.segments += bool(left) + bool(right) - 1
        m[begin:end] = bytes(end - begin)
