"""Records what Glance's API serves at GET /v2/schemas/image, from Glance's
own code (Debian python3-glance), with the custom image properties Debian's
glance-common installs as /etc/glance/schema-image.json (os_distro, ...), as
the API router loads them (images.load_custom_properties)."""
import json

from oslo_config import cfg

cfg.CONF(["--config-dir", "/etc/glance"], project="glance")

from glance.api.v2 import images  # noqa: E402
from glance.api.v2 import schemas  # noqa: E402

print(json.dumps(schemas.Controller(images.load_custom_properties()).image(None), indent=2, sort_keys=True))
