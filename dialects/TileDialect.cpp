// The tile dialect: registration and verifiers.
//
// Verifiers reject what a kernel author can get wrong (shapes, scopes, dtypes) with a
// message that names the operands; the frontend reports them at the kernel's source line.
#include "TileDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tilec::tile;

#include "TileOpsDialect.cpp.inc"
#define GET_OP_CLASSES
#include "TileOps.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "TileAttrs.cpp.inc"

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "TileOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "TileAttrs.cpp.inc"
      >();
}

// ----- #tile.linear ------------------------------------------------------------------------

static ParseResult parseIntegerList(AsmParser &parser, SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
    int64_t value;
    if (parser.parseInteger(value))
      return failure();
    values.push_back(value);
    return success();
  });
}

/// `keyword = [[c0, c1, ...], ...]`: one vector of `rank` coordinates per input bit, flattened.
static ParseResult parseBases(AsmParser &parser, llvm::StringRef keyword, size_t rank,
                              SmallVectorImpl<int64_t> &flat) {
  if (parser.parseKeyword(keyword) || parser.parseEqual())
    return failure();
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
    SMLoc where = parser.getCurrentLocation();
    SmallVector<int64_t> vector;
    if (parseIntegerList(parser, vector))
      return failure();
    if (vector.size() != rank)
      return parser.emitError(where) << keyword << " basis has " << vector.size()
                                     << " coordinates for a rank-" << rank << " tile";
    flat.append(vector.begin(), vector.end());
    return success();
  });
}

Attribute LinearLayoutAttr::parse(AsmParser &parser, Type) {
  SMLoc where = parser.getCurrentLocation();
  SmallVector<int64_t> shape, registers, lanes, warps;
  if (parser.parseLess() || parseIntegerList(parser, shape))
    return {};
  if (shape.empty()) {
    parser.emitError(where) << "a layout needs a tile shape of rank 1 or more";
    return {};
  }
  if (parser.parseComma() || parseBases(parser, "register", shape.size(), registers) ||
      parser.parseComma() || parseBases(parser, "lane", shape.size(), lanes) ||
      parser.parseComma() || parseBases(parser, "warp", shape.size(), warps) ||
      parser.parseGreater())
    return {};
  return getChecked([&]() { return parser.emitError(where); }, parser.getContext(), shape,
                    registers, lanes, warps);
}

static void printBases(AsmPrinter &printer, ArrayRef<int64_t> flat, size_t rank) {
  printer << "[";
  for (size_t i = 0; i < flat.size(); i += rank) {
    if (i)
      printer << ", ";
    printer << "[";
    llvm::interleaveComma(flat.slice(i, rank), printer);
    printer << "]";
  }
  printer << "]";
}

void LinearLayoutAttr::print(AsmPrinter &printer) const {
  size_t rank = getShape().size();
  printer << "<[";
  llvm::interleaveComma(getShape(), printer);
  printer << "], register = ";
  printBases(printer, getRegisterBases(), rank);
  printer << ", lane = ";
  printBases(printer, getLaneBases(), rank);
  printer << ", warp = ";
  printBases(printer, getWarpBases(), rank);
  printer << ">";
}

static int64_t paddedExtent(int64_t extent) { return int64_t(llvm::PowerOf2Ceil(extent)); }

/// Gaussian elimination over GF(2): false when `vector` depends on the rows already added.
static bool addIndependent(SmallVectorImpl<uint64_t> &rows, uint64_t vector) {
  for (uint64_t row : rows)
    vector = std::min(vector, vector ^ row);
  if (!vector)
    return false;
  rows.push_back(vector);
  llvm::sort(rows, std::greater<uint64_t>());
  return true;
}

LogicalResult LinearLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                       ArrayRef<int64_t> shape, ArrayRef<int64_t> registers,
                                       ArrayRef<int64_t> lanes, ArrayRef<int64_t> warps) {
  size_t rank = shape.size();
  if (rank == 0)
    return emitError() << "a layout needs a tile shape of rank 1 or more";
  SmallVector<unsigned> offsets;
  unsigned bits = 0;
  for (int64_t extent : shape) {
    if (extent <= 0)
      return emitError() << "layout extents must be positive";
    offsets.push_back(bits);
    bits += llvm::Log2_64(paddedExtent(extent));
  }
  if (bits > 62)
    return emitError() << "a layout tile has at most 2^62 elements";
  for (ArrayRef<int64_t> flat : {registers, lanes, warps})
    if (flat.size() % rank)
      return emitError() << "basis lists must hold " << rank << " coordinates per bit";
  if ((lanes.size() + warps.size()) / rank > 10)
    return emitError() << "a layout spans at most 1024 threads";
  auto pack = [&](ArrayRef<int64_t> vector, uint64_t &packed) -> LogicalResult {
    packed = 0;
    for (size_t d = 0; d < rank; ++d) {
      if (vector[d] < 0 || vector[d] >= paddedExtent(shape[d]))
        return emitError() << "basis coordinate " << vector[d] << " of dimension " << d
                           << " leaves the tile (extent " << shape[d] << ", padded to "
                           << paddedExtent(shape[d]) << ")";
      packed |= uint64_t(vector[d]) << offsets[d];
    }
    return success();
  };
  SmallVector<uint64_t> rows;
  for (size_t i = 0; i < registers.size(); i += rank) {
    uint64_t packed;
    if (failed(pack(registers.slice(i, rank), packed)))
      return failure();
    if (!addIndependent(rows, packed))
      return emitError() << "register " << (uint64_t(1) << (i / rank))
                         << " repeats an element another register of the thread holds";
  }
  for (ArrayRef<int64_t> flat : {lanes, warps})
    for (size_t i = 0; i < flat.size(); i += rank) {
      uint64_t packed;
      if (failed(pack(flat.slice(i, rank), packed)))
        return failure();
      addIndependent(rows, packed);
    }
  if (rows.size() != bits)
    return emitError() << "the layout leaves elements of the tile without a holder (its "
                       << "bases span " << rows.size() << " of " << bits << " coordinate bits)";
  return success();
}

// ----- #tile.swizzle -----------------------------------------------------------------------

Attribute SwizzleAttr::parse(AsmParser &parser, Type) {
  SMLoc where = parser.getCurrentLocation();
  int64_t bytes = 0, pad = 0;
  if (parser.parseLess())
    return {};
  if (failed(parser.parseOptionalKeyword("none"))) {
    if (parser.parseInteger(bytes) || parser.parseKeyword("B"))
      return {};
  }
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("pad") || parser.parseEqual() || parser.parseInteger(pad)))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&]() { return parser.emitError(where); }, parser.getContext(), bytes, pad);
}

void SwizzleAttr::print(AsmPrinter &printer) const {
  printer << "<";
  if (getBytes())
    printer << getBytes() << "B";
  else
    printer << "none";
  if (getPad())
    printer << ", pad = " << getPad();
  printer << ">";
}

LogicalResult SwizzleAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t bytes,
                                  int64_t pad) {
  if (!llvm::is_contained({int64_t(0), int64_t(32), int64_t(64), int64_t(128)}, bytes))
    return emitError() << "a swizzle spans 32, 64 or 128 bytes, not " << bytes;
  if (pad < 0)
    return emitError() << "row padding must not be negative";
  if (bytes && pad)
    return emitError() << "a swizzled tile is not padded";
  return success();
}

llvm::StringRef tilec::tile::scopeOf(MemRefType type) {
  if (auto space = llvm::dyn_cast_or_null<StringAttr>(type.getMemorySpace()))
    return space.getValue();
  return "global";
}

static bool isBlockScope(llvm::StringRef scope) {
  return scope == "shared" || scope == "fragment" || scope == "local" || scope == "var";
}

static MemRefType memrefOf(Value value) { return llvm::cast<MemRefType>(value.getType()); }

/// The shape with unit extents dropped: two boxes match when these are equal.
static SmallVector<int64_t> squeezed(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> result;
  for (int64_t extent : shape)
    if (extent != 1)
      result.push_back(extent);
  return result;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "(";
  for (auto [i, extent] : llvm::enumerate(shape)) {
    if (i)
      text += ", ";
    text += ShapedType::isDynamic(extent) ? std::string("?") : std::to_string(extent);
  }
  return text + ")";
}

/// A region op's body must have `count` index block arguments.
static LogicalResult verifyIndexArguments(Operation *op, Region &body, unsigned count,
                                          llvm::StringRef what) {
  Block &block = body.front();
  if (block.getNumArguments() != count)
    return op->emitOpError() << "body takes " << block.getNumArguments() << " " << what
                             << " but " << count << " are needed";
  for (BlockArgument arg : block.getArguments())
    if (!arg.getType().isIndex())
      return op->emitOpError() << "body arguments must be index values";
  return success();
}

static LogicalResult verifyInsideKernel(Operation *op) {
  if (!op->getParentOfType<KernelOp>())
    return op->emitOpError() << "must be inside a tile.kernel";
  return success();
}

LogicalResult KernelOp::verify() {
  if (getGrid().empty() || getGrid().size() > 3)
    return emitOpError() << "needs one to three grid dimensions, got " << getGrid().size();
  ArrayRef<int64_t> threads = getThreads();
  if (threads.empty() || threads.size() > 3)
    return emitOpError() << "needs one to three thread dimensions, got " << threads.size();
  int64_t total = 1;
  for (int64_t count : threads) {
    if (count <= 0)
      return emitOpError() << "thread counts must be positive";
    total *= count;
  }
  if (total > 1024)
    return emitOpError() << "a block has at most 1024 threads, got " << total;
  if (getOperation()->getParentOfType<KernelOp>())
    return emitOpError() << "kernels cannot be nested";
  return verifyIndexArguments(*this, getBody(), getGrid().size(), "block indices");
}

static constexpr int64_t kWarpgroupThreads = 128;

static int64_t kernelThreads(KernelOp kernel) {
  int64_t threads = 1;
  for (int64_t count : kernel.getThreads())
    threads *= count;
  return threads;
}

/// The threads that run `op`: those of the tile.warpgroups (a T.ws block) around it, else the
/// kernel's.
static int64_t threadsRunning(Operation *op, KernelOp kernel) {
  if (auto groups = op->getParentOfType<WarpgroupsOp>())
    return kWarpgroupThreads * static_cast<int64_t>(groups.getGroups().size());
  return kernelThreads(kernel);
}

/// A tile.layout must be a #tile.linear over `shape` spanning the threads that run the op: the
/// kernel's, or those of the T.ws block around it; a fragment's allocation may span those of
/// the T.ws blocks using it, when every use is in one of them. Outside T.ws blocks it may span
/// fewer (a branch on the thread index, a thread count that is not a power of two).
static LogicalResult verifyLayout(Operation *op, Attribute attr, ArrayRef<int64_t> shape) {
  auto layout = llvm::dyn_cast<LinearLayoutAttr>(attr);
  if (!layout)
    return op->emitOpError() << "tile.layout must be a #tile.linear layout, not " << attr;
  if (layout.getShape() != shape)
    return op->emitOpError() << "layout over " << shapeString(layout.getShape())
                             << " for a tile of shape " << shapeString(shape);
  auto kernel = op->getParentOfType<KernelOp>();
  if (!kernel)
    return success();
  int64_t threads = threadsRunning(op, kernel);
  if (layout.getNumThreads() == threads)
    return success();
  bool usedByThoseThreads = isa<AllocOp>(op) && !op->getResult(0).use_empty() &&
                            llvm::all_of(op->getResult(0).getUsers(), [&](Operation *user) {
                              return threadsRunning(user, kernel) == layout.getNumThreads();
                            });
  if (usedByThoseThreads)
    return success();
  bool inWarpgroups = static_cast<bool>(op->getParentOfType<WarpgroupsOp>());
  // Outside T.ws blocks a layout may span fewer threads than the kernel's: those of a branch
  // on the thread index (`if tx < 32:`), and the largest power of two of a count that is not
  // one (96 threads); the threads past it run as copies (compiler/passes/_thread_range.py).
  // A fragment some T.ws block uses keeps that block's threads: its registers are theirs.
  bool usedInWarpgroups = isa<AllocOp>(op) &&
                          llvm::any_of(op->getResult(0).getUsers(), [](Operation *user) {
                            return static_cast<bool>(user->getParentOfType<WarpgroupsOp>());
                          });
  if (!inWarpgroups && !usedInWarpgroups && layout.getNumThreads() < threads)
    return success();
  return op->emitOpError() << "layout spans " << layout.getNumThreads() << " threads but the "
                           << (inWarpgroups ? "T.ws block running it" : "kernel") << " has "
                           << threads;
}

LogicalResult AllocOp::verify() {
  llvm::StringRef scope = scopeOf(getBuffer().getType());
  if (!isBlockScope(scope))
    return emitOpError() << "allocates in the shared, fragment, local or var scope, not '"
                         << scope << "'";
  if (scope == "var" && getBuffer().getType().getNumElements() != 1)
    return emitOpError() << "a var holds one element";
  if (Attribute layout = (*this)->getAttr(kLayoutAttrName)) {
    if (scope != "fragment")
      return emitOpError() << "only a fragment has a thread layout";
    if (failed(verifyLayout(*this, layout, getBuffer().getType().getShape())))
      return failure();
  }
  return verifyInsideKernel(*this);
}

/// What every box copy checks of its operands: one offset and one extent per dimension of
/// each buffer, positive extents, boxes of one shape (unit extents aside), one element type,
/// and a box no larger than a block-level buffer it reads or writes.
static LogicalResult verifyBoxCopy(Operation *op, Value srcValue, size_t srcOffsets,
                                   ArrayRef<int64_t> srcShape, Value dstValue,
                                   size_t dstOffsets, ArrayRef<int64_t> dstShape) {
  MemRefType src = memrefOf(srcValue), dst = memrefOf(dstValue);
  if (srcOffsets != static_cast<size_t>(src.getRank()))
    return op->emitOpError() << "source takes " << src.getRank() << " offsets, got "
                             << srcOffsets;
  if (dstOffsets != static_cast<size_t>(dst.getRank()))
    return op->emitOpError() << "destination takes " << dst.getRank() << " offsets, got "
                             << dstOffsets;
  if (srcShape.size() != static_cast<size_t>(src.getRank()) ||
      dstShape.size() != static_cast<size_t>(dst.getRank()))
    return op->emitOpError() << "box ranks must match the buffers' ranks";
  for (int64_t extent : llvm::concat<const int64_t>(srcShape, dstShape))
    if (extent <= 0)
      return op->emitOpError() << "box extents must be positive";
  if (squeezed(srcShape) != squeezed(dstShape))
    return op->emitOpError() << "copies a box of shape " << shapeString(srcShape)
                             << " into a box of shape " << shapeString(dstShape);
  if (src.getElementType() != dst.getElementType())
    return op->emitOpError() << "source element type " << src.getElementType()
                             << " differs from destination element type "
                             << dst.getElementType();
  for (auto [buffer, box] : {std::pair(src, srcShape), std::pair(dst, dstShape)})
    if (scopeOf(buffer) != "global")
      for (auto [extent, size] : llvm::zip(box, buffer.getShape()))
        if (extent > size)
          return op->emitOpError() << "box " << shapeString(box) << " exceeds the "
                                   << scopeOf(buffer) << " buffer of shape "
                                   << shapeString(buffer.getShape());
  return success();
}

LogicalResult CopyOp::verify() {
  if (failed(verifyBoxCopy(*this, getSrc(), getSrcOffsets().size(), getSrcShape(), getDst(),
                           getDstOffsets().size(), getDstShape())))
    return failure();
  return verifyInsideKernel(*this);
}

LogicalResult GemmOp::verify() {
  MemRefType a = memrefOf(getA()), b = memrefOf(getB()), c = memrefOf(getC());
  if (a.getRank() != 2 || b.getRank() != 2 || c.getRank() != 2)
    return emitOpError() << "operands must be 2-d buffers";
  for (auto [name, type] : {std::pair("A", a), std::pair("B", b)})
    if (scopeOf(type) != "shared" && scopeOf(type) != "fragment" && scopeOf(type) != "local")
      return emitOpError() << name << " must be a shared or fragment buffer, not "
                           << scopeOf(type);
  if (scopeOf(c) != "fragment" && scopeOf(c) != "local")
    return emitOpError() << "C must be a fragment buffer, not " << scopeOf(c);
  int64_t m = getTransposeA() ? a.getDimSize(1) : a.getDimSize(0);
  int64_t ka = getTransposeA() ? a.getDimSize(0) : a.getDimSize(1);
  int64_t kb = getTransposeB() ? b.getDimSize(1) : b.getDimSize(0);
  int64_t n = getTransposeB() ? b.getDimSize(0) : b.getDimSize(1);
  if (ka != kb)
    return emitOpError() << "K of A (" << ka << ") differs from K of B (" << kb << ")";
  if (c.getDimSize(0) != m || c.getDimSize(1) != n)
    return emitOpError() << "C has shape " << shapeString(c.getShape()) << " but A x B is ("
                         << m << ", " << n << ")";
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "A and B element types differ: " << a.getElementType() << " vs "
                         << b.getElementType();
  llvm::StringRef policy = getPolicy();
  if (policy != "square" && policy != "full_row" && policy != "full_col")
    return emitOpError() << "unknown warp policy '" << policy << "'";
  return verifyInsideKernel(*this);
}

LogicalResult FillOp::verify() {
  MemRefType dst = memrefOf(getDst());
  if (getValue().getType() != dst.getElementType())
    return emitOpError() << "fills a buffer of " << dst.getElementType() << " with a "
                         << getValue().getType();
  if (!isBlockScope(scopeOf(dst)))
    return emitOpError() << "fills shared, fragment, local or var buffers, not "
                         << scopeOf(dst);
  return verifyInsideKernel(*this);
}

LogicalResult ParallelOp::verify() {
  if (getExtents().empty())
    return emitOpError() << "needs at least one extent";
  for (int64_t extent : getExtents())
    if (extent <= 0)
      return emitOpError() << "extents must be positive";
  if (failed(verifyIndexArguments(*this, getBody(), getExtents().size(), "indices")))
    return failure();
  if (Attribute layout = (*this)->getAttr(kLayoutAttrName))
    if (failed(verifyLayout(*this, layout, getExtents())))
      return failure();
  return verifyInsideKernel(*this);
}

LogicalResult PipelinedOp::verify() {
  if (static_cast<int64_t>(getNumStages()) < 0)
    return emitOpError() << "num_stages must not be negative";
  // A statement is an op with effects: the pure index math a frontend emits for a statement
  // (constants, muli, addi) belongs to it and is not counted.
  size_t statements = llvm::count_if(getBody().front().without_terminator(),
                                     [](Operation &op) { return !mlir::isPure(&op); });
  for (std::optional<ArrayRef<int64_t>> schedule : {getOrder(), getStage()})
    if (schedule && schedule->size() != statements)
      return emitOpError() << "order and stage need one entry per statement of the body ("
                           << statements << "), got " << schedule->size();
  if (failed(verifyIndexArguments(*this, getBody(), 1, "loop indices")))
    return failure();
  return verifyInsideKernel(*this);
}

LogicalResult ForOp::verify() {
  return verifyIndexArguments(*this, getBody(), 1, "loop indices");
}

LogicalResult ReduceOp::verify() {
  MemRefType src = memrefOf(getSrc()), dst = memrefOf(getDst());
  llvm::StringRef kind = getKind();
  if (!llvm::is_contained({"max", "min", "umax", "umin", "sum", "abssum", "absmax"}, kind))
    return emitOpError() << "unknown reduction '" << kind << "'";
  int64_t dim = getDim();
  if (dim < 0 || dim >= src.getRank())
    return emitOpError() << "dim " << dim << " is out of range for a " << src.getRank()
                         << "-d source";
  SmallVector<int64_t> expected(src.getShape());
  expected.erase(expected.begin() + dim);
  if (squeezed(expected) != squeezed(dst.getShape()))
    return emitOpError() << "reducing " << shapeString(src.getShape()) << " along dim " << dim
                         << " gives " << shapeString(expected) << ", not "
                         << shapeString(dst.getShape());
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "source and destination element types differ";
  return verifyInsideKernel(*this);
}

LogicalResult AtomicAddOp::verify() {
  MemRefType dst = memrefOf(getDst());
  if (getIndices().size() != static_cast<size_t>(dst.getRank()))
    return emitOpError() << "needs " << dst.getRank() << " indices, got "
                         << getIndices().size();
  if (getValue().getType() != dst.getElementType())
    return emitOpError() << "adds a " << getValue().getType() << " to a buffer of "
                         << dst.getElementType();
  if (scopeOf(dst) != "global" && scopeOf(dst) != "shared")
    return emitOpError() << "atomics target global or shared buffers, not " << scopeOf(dst);
  return verifyInsideKernel(*this);
}

LogicalResult ConvertLayoutOp::verify() {
  MemRefType src = memrefOf(getSrc()), dst = memrefOf(getDst());
  if (scopeOf(src) != "fragment" || scopeOf(dst) != "fragment")
    return emitOpError() << "converts a fragment into a fragment, not " << scopeOf(src)
                         << " into " << scopeOf(dst);
  if (src.getShape() != dst.getShape() || src.getElementType() != dst.getElementType())
    return emitOpError() << "source and destination differ in shape or element type";
  return verifyInsideKernel(*this);
}

// ----- mbarriers and warp specialization ---------------------------------------------------

static constexpr int64_t kMaxArriveCount = (1 << 20) - 1; // PTX's mbarrier count limit

static LogicalResult verifyBarrierBuffer(Operation *op, Value barriers) {
  if (scopeOf(memrefOf(barriers)) != "barrier")
    return op->emitOpError() << "takes a barrier buffer (tile.alloc_barrier), not a "
                             << scopeOf(memrefOf(barriers)) << " buffer";
  return verifyInsideKernel(op);
}

LogicalResult AllocBarrierOp::verify() {
  ArrayRef<int64_t> counts = getArriveCounts();
  MemRefType type = memrefOf(getBarriers());
  if (scopeOf(type) != "barrier")
    return emitOpError() << "allocates in the barrier scope, not '" << scopeOf(type) << "'";
  if (counts.empty())
    return emitOpError() << "needs at least one arrive count";
  if (type.getShape()[0] != static_cast<int64_t>(counts.size()))
    return emitOpError() << "has " << counts.size() << " arrive counts for "
                         << type.getShape()[0] << " barriers";
  for (int64_t count : counts)
    if (count < 1 || count > kMaxArriveCount)
      return emitOpError() << "an arrive count is 1 to " << kMaxArriveCount << ", got " << count;
  if (!llvm::isa_and_nonnull<KernelOp>(getOperation()->getParentOp()))
    return emitOpError() << "stands directly in a tile.kernel's body (barriers are "
                            "initialized once per block)";
  return success();
}

LogicalResult MbarrierArriveOp::verify() { return verifyBarrierBuffer(*this, getBarriers()); }

LogicalResult MbarrierExpectTxOp::verify() { return verifyBarrierBuffer(*this, getBarriers()); }

LogicalResult MbarrierWaitParityOp::verify() {
  return verifyBarrierBuffer(*this, getBarriers());
}

LogicalResult TmaCopyOp::verify() {
  MemRefType src = memrefOf(getSrc()), dst = memrefOf(getDst());
  if (scopeOf(src) != "global" || scopeOf(dst) != "shared")
    return emitOpError() << "copies from a global buffer into a shared one, not from "
                         << scopeOf(src) << " into " << scopeOf(dst);
  if (failed(verifyBoxCopy(*this, getSrc(), getSrcOffsets().size(), getSrcShape(), getDst(),
                           getDstOffsets().size(), getDstShape())))
    return failure();
  return verifyBarrierBuffer(*this, getBarriers());
}

LogicalResult FenceProxyAsyncOp::verify() { return verifyInsideKernel(*this); }

LogicalResult WarpgroupsOp::verify() {
  ArrayRef<int64_t> groups = getGroups();
  if (groups.empty())
    return emitOpError() << "needs at least one warpgroup";
  auto kernel = getOperation()->getParentOfType<KernelOp>();
  if (!kernel)
    return emitOpError() << "must be inside a tile.kernel";
  int64_t threads = kernelThreads(kernel);
  for (auto [i, group] : llvm::enumerate(groups)) {
    if (group < 0 || (group + 1) * kWarpgroupThreads > threads)
      return emitOpError() << "warpgroup " << group << " is not in a block of " << threads
                           << " threads (warpgroup g is threads 128g to 128g + 127)";
    if (llvm::is_contained(groups.take_front(i), group))
      return emitOpError() << "lists warpgroup " << group << " twice";
  }
  if (getOperation()->getParentOfType<WarpgroupsOp>())
    return emitOpError() << "cannot be nested in another tile.warpgroups";
  if (getBody().front().getNumArguments() != 0)
    return emitOpError() << "body takes no arguments";
  return success();
}

// C entry point for the Python extension: keeps the nanobind unit free of LLVM's flags.
#include "mlir/CAPI/IR.h"
extern "C" void tilecRegisterTileDialect(MlirContext context) {
  unwrap(context)->getOrLoadDialect<TileDialect>();
}
