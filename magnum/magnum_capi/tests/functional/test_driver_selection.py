"""How Magnum finds this driver: the magnum.drivers entry point, the
(server_type, os, coe) tuples of [magnum_capi] provides, [drivers]
disabled_drivers, and (Magnum >= 18) the entry point name that the image
property magnum_driver names. See docs/operator-guide.md."""

from magnum.common import exception
from magnum.drivers.common import driver as magnum_driver
from magnum.tests import base as magnum_base
from stevedore import driver as stevedore_driver

from magnum_capi import client
from magnum_capi import conf  # noqa: F401 - registers [magnum_capi]
from magnum_capi import driver as capi_driver


class DriverSelectionTest(magnum_base.TestCase):
    def setUp(self):
        super().setUp()
        # Magnum caches the tuple map on the class, for the process.
        self._forget_drivers()
        self.addCleanup(self._forget_drivers)

    def _forget_drivers(self):
        magnum_driver.Driver.definitions = None

    def test_default_provides(self):
        for os_distro in ("ubuntu", "flatcar", "debian", "rocky"):
            found = magnum_driver.Driver.get_driver("vm", os_distro, "kubernetes")
            self.assertIsInstance(found, capi_driver.Driver, os_distro)
        entry = magnum_driver.Driver.get_drivers()[("vm", "ubuntu", "kubernetes")]
        self.assertEqual("magnum_capi", entry["entry_point_name"])
        self.assertRaises(exception.ClusterTypeNotSupported,
                          magnum_driver.Driver.get_driver, "bm", "ubuntu", "kubernetes")

    def test_distinct_os_distro(self):
        """An os_distro no other driver claims: images get os_distro
        ubuntu-capi, and the tuple leaves (vm, ubuntu, kubernetes) to whoever
        else provides it."""
        self.config(provides=["vm:ubuntu-capi:kubernetes", " vm : flatcar-capi : kubernetes "],
                    group="magnum_capi")
        found = magnum_driver.Driver.get_driver("vm", "ubuntu-capi", "kubernetes")
        self.assertIsInstance(found, capi_driver.Driver)
        self.assertIsInstance(magnum_driver.Driver.get_driver("vm", "flatcar-capi", "kubernetes"),
                              capi_driver.Driver)
        self.assertRaises(exception.ClusterTypeNotSupported,
                          magnum_driver.Driver.get_driver, "vm", "ubuntu", "kubernetes")

    def test_disabled(self):
        self.config(disabled_drivers=["magnum_capi"], group="drivers")
        self.assertRaises(exception.ClusterTypeNotSupported,
                          magnum_driver.Driver.get_driver, "vm", "ubuntu", "kubernetes")

    def test_by_entry_point_name(self):
        """Magnum >= 18 loads a driver named by the template (the image
        property magnum_driver) with stevedore, by entry point name."""
        found = stevedore_driver.DriverManager("magnum.drivers", "magnum_capi").driver()
        self.assertIsInstance(found, capi_driver.Driver)

    def test_bad_provides_names_the_entry(self):
        self.config(provides=["vm:ubuntu"], group="magnum_capi")
        err = self.assertRaises(exception.InvalidParameterValue,
                                magnum_driver.Driver.get_driver, "vm", "ubuntu", "kubernetes")
        self.assertIn("'vm:ubuntu'", str(err))
        self.assertIn("server_type:os:coe", str(err))

    def test_constructing_the_driver_does_no_io(self):
        """magnum-api and every conductor call build a new driver: neither
        that nor provides may reach the sidecar."""
        self.config(sidecar_address="unix:///nonexistent/magnum-capi.sock", group="magnum_capi")
        client.reset()
        self.addCleanup(client.reset)
        drv = capi_driver.Driver()
        self.assertEqual(4, len(drv.provides))
        magnum_driver.Driver.get_driver("vm", "ubuntu", "kubernetes")
        self.assertIsNone(client._channel_state["channel"])
