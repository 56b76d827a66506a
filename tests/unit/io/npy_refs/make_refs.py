# Regenerates the reference .npy files test_npy.cpp checks (numpy 1.24.2 wrote the checked-in ones).
# Run from this folder: python3 make_refs.py
import numpy as np
from numpy.lib import format as npformat

np.save("f4_2x3.npy", np.array([[1.5, -2.0, 3.25], [0.0, 0.001, 65504.0]], dtype="<f4"))
np.save("f8_vec.npy", np.array([1.0, -0.5, 1e300, 5e-324, np.pi, -0.0], dtype="<f8"))
np.save("f2_vec.npy", np.array([0.0, 1.0, -2.0, 65504.0, 2.0**-14, 2.0**-24, np.inf, -np.inf,
                                np.nan, 0.333251953125], dtype="<f2"))
np.save("i8_2x2.npy", np.array([[-2**63, 2**63 - 1], [0, -1]], dtype="<i8"))
np.save("i4_fortran_2x3.npy", np.asfortranarray(np.arange(6, dtype="<i4").reshape(2, 3)))
np.save("f4_fortran_2x3x4.npy",
        np.asfortranarray(np.arange(24, dtype="<f4").reshape(2, 3, 4) - 10.0))
np.save("f8_scalar.npy", np.array(3.5, dtype="<f8"))
np.save("f8_empty_0x3.npy", np.zeros((0, 3), dtype="<f8"))
np.save("i2_2x3x4.npy", (np.arange(24, dtype="<i2") * 1000 - 12000).reshape(2, 3, 4))
np.save("bool_5.npy", np.array([True, False, False, True, True]))
np.save("u1_4.npy", np.array([0, 1, 128, 255], dtype="u1"))
np.save("f8_big_endian.npy", np.array([1.0, -2.5, 1e-300], dtype=">f8"))
np.save("i4_big_endian_2x2.npy", np.array([[1, -2], [70000, -70000]], dtype=">i4"))
with open("f4_v2.npy", "wb") as f:
    npformat.write_array(f, np.array([[1.0, 2.0], [3.0, 4.0]], dtype="<f4"), version=(2, 0))
with open("i8_v3.npy", "wb") as f:
    npformat.write_array(f, np.array([7, -8, 9], dtype="<i8"), version=(3, 0))
