// RigPort's test harness on librw: reads RenderWare animations (.anm) with
// librw's own Animation::streamRead and prints what it holds, so tests compare
// librw's view with RigPort's; "anm IN OUT" also writes the animation back
// with librw's Animation::streamWrite.
#include <cstdio>
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

int main(int argc, char **argv){
	if(argc < 3 || strcmp(argv[1], "anm") != 0){
		fprintf(stderr, "usage: %s anm IN.anm [OUT.anm]\n", argv[0]);
		return 2;
	}
	Engine::init();
	registerHAnimPlugin();
	Engine::open(nil);
	Engine::start();
	return anm(argv[2], argc > 3 ? argv[3] : nullptr);
}
