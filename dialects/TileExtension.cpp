// nanobind module `tilec.dialect._tile`: loads the tile dialect into an MLIR context.
#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include <nanobind/nanobind.h>

extern "C" void tilecRegisterTileDialect(MlirContext context);

NB_MODULE(_tile, m) {
  m.doc() = "The tile dialect's C++ half, loaded into the pip MLIR's Python bindings.";
  m.def("register_dialect", [](MlirContext context) { tilecRegisterTileDialect(context); },
        nanobind::arg("context"), "Load the tile dialect into `context`.");
}
