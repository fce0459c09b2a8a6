//! Scale-search helpers shared by the K-quants and the imatrix paths of the legacy quants
//! (`make_qx_quants`, `make_qkx2_quants`, `make_qkx3_quants`, `make_qp_quants`, …).
