"""What a cluster looks like once moved to a new template (upgrade_cluster,
and the operator's upgrade preview)."""

from magnum_capi import convert


def labels(cluster_labels, old_template_labels, new_template_labels):
    """The cluster's labels after an upgrade to a new template.

    Magnum copies the template's labels into the cluster's at create time, and
    cluster labels win over template labels; left alone, the old template's
    values would stay pinned after an upgrade. A label the cluster inherited
    unchanged from the old template follows the new one (changed, or removed
    when the new template dropped it); a label the user set or changed keeps
    its value; a label only the new template has is added.
    """
    cluster_labels = dict(cluster_labels or {})
    old = dict(old_template_labels or {})
    new = dict(new_template_labels or {})
    out = {}
    for key, value in cluster_labels.items():
        if key in old and old[key] == value:
            if key in new:
                out[key] = new[key]
        else:
            out[key] = value
    for key, value in new.items():
        if key not in old and key not in out:
            out[key] = value
    return out


def spec(cluster, new_template):
    """(ClusterSpec of the upgraded cluster, its labels). The Magnum objects
    are not changed: upgrade_cluster saves them only once the sidecar has
    accepted the upgrade."""
    new_labels = labels(
        cluster.labels,
        getattr(cluster.cluster_template, "labels", None),
        new_template.labels,
    )
    msg = convert.spec(cluster, template=new_template)
    msg.cluster.cluster_template_id = new_template.uuid
    msg.cluster.ClearField("labels")
    msg.cluster.labels.update(new_labels)
    for ng in msg.nodegroups:
        ng.image_id = new_template.image_id
    return msg, new_labels


def single_group(nodegroup):
    """Whether an upgrade of nodegroup moves that node group alone: a worker
    group other than the default one. magnum-api passes the default worker
    group when the user names none, and an upgrade of a default group (or
    the master group) moves the whole cluster."""
    return (nodegroup is not None
            and not getattr(nodegroup, "is_default", True)
            and getattr(nodegroup, "role", "") != "master")


def nodegroup_labels(nodegroup_labels_, new_template_labels):
    """A node group's labels once upgraded on its own, as Magnum's Heat
    driver writes them (get_new_labels): its own, with the template's
    kube_tag. The sidecar reads the version from the image, not kube_tag;
    the label keeps what Magnum shows consistent."""
    out = dict(nodegroup_labels_ or {})
    new = dict(new_template_labels or {})
    if "kube_tag" in new:
        out["kube_tag"] = new["kube_tag"]
    return out


def nodegroup_spec(cluster, nodegroup, new_template):
    """(ClusterSpec with nodegroup alone moved to new_template's image, the
    group's labels). The cluster keeps its template and labels, and the
    other node groups theirs: the sidecar gives the group its own image and
    Kubernetes version. The Magnum objects are not changed."""
    labels = nodegroup_labels(nodegroup.labels, new_template.labels)
    msg = convert.spec(cluster)
    for ng in msg.nodegroups:
        if ng.uuid == nodegroup.uuid:
            ng.image_id = new_template.image_id
            ng.ClearField("labels")
            ng.labels.update(labels)
    return msg, labels
