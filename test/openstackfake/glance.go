package openstackfake

import (
	"net/http"
	"net/url"
	"strconv"
)

// AddImage registers an image and returns it with defaults filled in.
func (s *Server) AddImage(img Image) Image {
	if img.ID == "" {
		img.ID = newUUID()
	}
	if img.Visibility == "" {
		img.Visibility = "public"
	}
	if img.Status == "" {
		img.Status = "active"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.images = append(s.images, img)
	return img
}

func (s *Server) routeGlance(mux *http.ServeMux) {
	mux.HandleFunc("GET /image/{$}", s.glanceVersions)
	mux.HandleFunc("GET /image", s.glanceVersions)
	// glanceclient builds its image model from the schema; without it
	// every image property (os_distro, ...) reads as unset.
	mux.HandleFunc("GET /image/v2/schemas/image", func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, http.StatusOK, "application/json", fixture("glance-schema-image.json", nil))
	})
	mux.HandleFunc("GET /image/v2/images", s.listImages)
	mux.HandleFunc("GET /image/v2/images/{id}", s.showImage)
}

// glanceVersions answers 300 Multiple Choices, as Glance does at its root.
func (s *Server) glanceVersions(w http.ResponseWriter, r *http.Request) {
	writeBody(w, http.StatusMultipleChoices, "application/json", fixture("glance-versions.json", map[string]string{"base": s.URL + "/image"}))
}

func (s *Server) showImage(w http.ResponseWriter, r *http.Request) {
	id, tok := r.PathValue("id"), tokenFrom(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, img := range s.images {
		if img.ID == id && imageVisible(img, tok) {
			writeJSON(w, http.StatusOK, renderImage(img))
			return
		}
	}
	writeNotFound(w, ImageService, "image", id)
}

// glanceListLimit is Glance's default page size (api_limit_max is 1000).
const glanceListLimit = 25

func (s *Server) listImages(w http.ResponseWriter, r *http.Request) {
	q, tok := r.URL.Query(), tokenFrom(r)
	limit := glanceListLimit
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 {
		limit = l
	}
	s.mu.Lock()
	var matched []Image
	for _, img := range s.images {
		if imageListed(img, tok, q) {
			matched = append(matched, img)
		}
	}
	s.mu.Unlock()
	if marker := q.Get("marker"); marker != "" {
		for i, img := range matched {
			if img.ID == marker {
				matched = matched[i+1:]
				break
			}
		}
	}
	body := map[string]any{"schema": "/v2/schemas/images", "first": "/v2/images" + query(q, "marker")}
	if len(matched) > limit {
		matched = matched[:limit]
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		next.Set("marker", matched[limit-1].ID)
		body["next"] = "/v2/images?" + next.Encode()
	}
	images := []any{}
	for _, img := range matched {
		images = append(images, renderImage(img))
	}
	body["images"] = images
	writeJSON(w, http.StatusOK, body)
}

func query(q url.Values, drop string) string {
	c := url.Values{}
	for k, v := range q {
		if k != drop {
			c[k] = v
		}
	}
	if len(c) == 0 {
		return ""
	}
	return "?" + c.Encode()
}

// imageVisible is Glance's rule for GET by id.
func imageVisible(img Image, tok Token) bool {
	if tok.isAdmin() || img.Owner == tok.ProjectID {
		return true
	}
	return img.Visibility == "public" || img.Visibility == "community"
}

// imageListed is Glance's rule for the list: community images only when
// asked for, hidden ones only with os_hidden=true, then the filters.
func imageListed(img Image, tok Token, q url.Values) bool {
	if !imageVisible(img, tok) {
		return false
	}
	if v := q.Get("visibility"); v != "" && v != "all" {
		if img.Visibility != v {
			return false
		}
	} else if img.Visibility == "community" && img.Owner != tok.ProjectID {
		return false
	}
	if img.Hidden && q.Get("os_hidden") != "true" {
		return false
	}
	for key, field := range map[string]string{"name": img.Name, "status": img.Status, "owner": img.Owner, "id": img.ID} {
		if v := q.Get(key); v != "" && v != field {
			return false
		}
	}
	return true
}

// glanceCoreFields are the image schema's base properties; every other key
// of the recorded image is an image property and is replaced by the
// registered ones.
var glanceCoreFields = map[string]bool{
	"checksum": true, "container_format": true, "created_at": true, "disk_format": true, "file": true,
	"id": true, "min_disk": true, "min_ram": true, "name": true, "os_hash_algo": true, "os_hash_value": true,
	"os_hidden": true, "owner": true, "protected": true, "schema": true, "self": true, "size": true,
	"status": true, "stores": true, "tags": true, "updated_at": true, "virtual_size": true, "visibility": true,
}

func renderImage(img Image) map[string]any {
	m := object("glance-image.json", nil)
	for k := range m {
		if !glanceCoreFields[k] {
			delete(m, k)
		}
	}
	for k, v := range img.Properties {
		m[k] = v
	}
	m["id"], m["name"], m["owner"] = img.ID, img.Name, img.Owner
	m["visibility"], m["status"], m["os_hidden"] = img.Visibility, img.Status, img.Hidden
	m["self"] = "/v2/images/" + img.ID
	m["file"] = "/v2/images/" + img.ID + "/file"
	return m
}
