// RigPort's test harness on librw: reads RenderWare animations (.anm) with
// librw's own Animation::streamRead and prints what it holds, so tests compare
// librw's view with RigPort's; "anm IN OUT" also writes the animation back
// with librw's Animation::streamWrite. "txd IN OUTDIR" reads a texture
// dictionary with TexDictionary::streamRead and writes each texture's level 0,
// as librw's Raster::toImage gives it in 32 bits, to OUTDIR/NAME.rgba.
// "pose DFF ANM TIME" reads a clump and an animation, plays the animation on
// the clump's HAnim hierarchy for TIME seconds (AnimInterpolator::addTime) and
// prints each node's matrix from HAnimHierarchy::updateMatrices.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <rw.h>

using namespace rw;

static int anm(const char *in, const char *out){
	StreamFile s;
	if(!s.open(in, "rb")){ fprintf(stderr, "cannot open %s\n", in); return 1; }
	if(!findChunk(&s, ID_ANIMANIMATION, nil, nil)){ fprintf(stderr, "%s: no animation chunk\n", in); return 1; }
	Animation *a = Animation::streamRead(&s);
	s.close();
	if(a == nil){ fprintf(stderr, "%s: Animation::streamRead failed\n", in); return 1; }
	printf("type %d keys %d flags %d duration %.9g nodes %d\n",
	       a->interpInfo->id, a->numFrames, a->flags, a->duration, a->getNumNodes());
	HAnimKeyFrame *k = (HAnimKeyFrame*)a->keyframes;
	for(int32 i = 0; i < a->numFrames; i++)
		printf("key %d %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %d\n", i, k[i].time,
		       k[i].q.x, k[i].q.y, k[i].q.z, k[i].q.w, k[i].t.x, k[i].t.y, k[i].t.z,
		       (int)(k[i].prev - k));
	if(out){
		StreamFile o;
		if(!o.open(out, "wb")){ fprintf(stderr, "cannot write %s\n", out); return 1; }
		a->streamWrite(&o);
		o.close();
	}
	return 0;
}

static int pose(const char *dff, const char *in, float t){
	StreamFile s;
	if(!s.open(dff, "rb")){ fprintf(stderr, "cannot open %s\n", dff); return 1; }
	if(!findChunk(&s, ID_CLUMP, nil, nil)){ fprintf(stderr, "%s: no clump\n", dff); return 1; }
	Clump *c = Clump::streamRead(&s);
	s.close();
	if(c == nil){ fprintf(stderr, "%s: Clump::streamRead failed\n", dff); return 1; }
	HAnimHierarchy *h = HAnimHierarchy::get(c);
	if(h == nil){ fprintf(stderr, "%s: no HAnim hierarchy\n", dff); return 1; }
	h->attach();
	if(!s.open(in, "rb")){ fprintf(stderr, "cannot open %s\n", in); return 1; }
	if(!findChunk(&s, ID_ANIMANIMATION, nil, nil)){ fprintf(stderr, "%s: no animation chunk\n", in); return 1; }
	Animation *a = Animation::streamRead(&s);
	s.close();
	if(a == nil){ fprintf(stderr, "%s: Animation::streamRead failed\n", in); return 1; }
	h->interpolator->setCurrentAnim(a);
	h->interpolator->addTime(t);
	h->updateMatrices();
	for(int32 i = 0; i < h->numNodes; i++){
		Matrix *m = &h->matrices[i];
		printf("node %d %d %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", i, h->nodeInfo[i].id,
		       m->right.x, m->right.y, m->right.z, m->up.x, m->up.y, m->up.z,
		       m->at.x, m->at.y, m->at.z, m->pos.x, m->pos.y, m->pos.z);
	}
	return 0;
}

static int txd(const char *in, const char *outdir){
	StreamFile s;
	if(!s.open(in, "rb")){ fprintf(stderr, "cannot open %s\n", in); return 1; }
	if(!findChunk(&s, ID_TEXDICTIONARY, nil, nil)){ fprintf(stderr, "%s: no texture dictionary\n", in); return 1; }
	TexDictionary *d = TexDictionary::streamRead(&s);
	s.close();
	if(d == nil){ fprintf(stderr, "%s: TexDictionary::streamRead failed\n", in); return 1; }
	FORLIST(lnk, d->textures){
		Texture *t = Texture::fromDict(lnk);
		Raster *r = t->raster;
		Image *img = r->toImage();
		if(img == nil){ // librw converts only some raster formats to images
			printf("noimage %s format 0x%x\n", t->name, r->format);
			continue;
		}
		img->convertTo32();
		printf("texture %s %d %d levels %d format 0x%x\n", t->name, img->width, img->height,
		       r->getNumLevels(), r->format);
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s.rgba", outdir, t->name);
		FILE *f = fopen(path, "wb");
		if(f == nil){ fprintf(stderr, "cannot write %s\n", path); return 1; }
		for(int32 y = 0; y < img->height; y++)
			fwrite(img->pixels + y*img->stride, 1, img->width*4, f);
		fclose(f);
		img->destroy();
	}
	return 0;
}

int main(int argc, char **argv){
	if(argc < 3 || (strcmp(argv[1], "anm") != 0 && strcmp(argv[1], "txd") != 0 &&
	                strcmp(argv[1], "pose") != 0)){
		fprintf(stderr, "usage: %s anm IN.anm [OUT.anm] | txd IN.txd OUTDIR | pose IN.dff IN.anm TIME\n", argv[0]);
		return 2;
	}
	Engine::init();
	registerHAnimPlugin();
	Engine::open(nil);
	Engine::start();
	if(strcmp(argv[1], "txd") == 0)
		return argc > 3 ? txd(argv[2], argv[3]) : 2;
	if(strcmp(argv[1], "pose") == 0)
		return argc > 4 ? pose(argv[2], argv[3], (float)atof(argv[4])) : 2;
	return anm(argv[2], argc > 3 ? argv[3] : nullptr);
}
