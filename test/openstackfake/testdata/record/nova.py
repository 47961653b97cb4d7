"""Records Nova's answers from Nova's own code (Debian python3-nova): the
view builders and JSON serializer the API uses, fed with a KeyPair object
made as Nova's keypair API makes one. Placeholders in {braces} are filled by
the fake."""
import datetime
import json
import sys

from oslo_config import cfg
cfg.CONF([], project='nova')

from nova.api.openstack.compute import versions
from nova.api.openstack.compute.views import keypairs as kp_views
from nova.api.openstack.compute.views import versions as v_views
from nova.api.openstack import wsgi
from nova import crypto
from nova import objects

objects.register_all()
out = sys.argv[1]
ser = wsgi.JSONDictSerializer()


def write(name, body):
    text = ser.serialize(body)
    with open("%s/%s" % (out, name), "w") as f:
        f.write(json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n")


# GET /v2.1 (VersionsController.show)
write("nova-version-v2.1.json", v_views.ViewBuilder("{base}").build_version(versions.VERSIONS["v2.1"]))

private, public, fingerprint = crypto.generate_key_pair()
kp = objects.KeyPair(name="{name}", user_id="{user_id}", fingerprint=fingerprint,
                     public_key=public, type="ssh", id=1,
                     created_at=datetime.datetime(2026, 12, 3, 12, 0, 0, 123456),
                     deleted=False, deleted_at=None, updated_at=None)
vb = kp_views.ViewBuilder()
# POST /os-keypairs with a public key, no microversion (2.1): no private_key
write("nova-keypair-create.json", vb.create(kp))
# GET /os-keypairs/{name}, 2.1
write("nova-keypair-show.json", vb.show(kp))
# GET /os-keypairs, 2.1
write("nova-keypairs.json", vb.index(None, [kp]))
# GET /flavors/{id}/os-extra_specs (FlavorExtraSpecsController.index)
write("nova-flavor-extra-specs.json", dict(extra_specs={}))
print("public key sample:", public[:40], fingerprint)
